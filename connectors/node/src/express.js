// Express/Connect middleware: anteroom(options) -> (req, res, next). Works with Node's plain
// http server too (it uses only statusCode, setHeader, getHeader and end).
import { Core } from "./core.js";

function requestOf(req) {
  return {
    method: req.method,
    accept: req.headers.accept,
    cookie: req.headers.cookie,
    target: req.originalUrl ?? req.url,  // Express strips a mount path from req.url
    secure: req.secure ?? Boolean(req.socket?.encrypted),
    raw: req,
  };
}

function addSetCookie(res, cookie) {
  const prev = res.getHeader("Set-Cookie");
  res.setHeader("Set-Cookie", prev === undefined ? cookie : [].concat(prev, cookie));
}

// Admitted: req.anteroom = { ticket, user, room, expires_at }, then next(). Excluded paths
// go on with req.anteroom = null. Not admitted: the answer is sent and next is not called.
export function anteroom(options) {
  const core = new Core(options);
  const middleware = function anteroomMiddleware(req, res, next) {
    core.decide(requestOf(req)).then((d) => {
      if (d.refusal) {
        res.statusCode = d.refusal.status;
        for (const [k, v] of d.refusal.headers) res.setHeader(k, v);
        res.end(d.refusal.body);
        return;
      }
      req.anteroom = d.admission ?? null;
      if (d.setCookie) addSetCookie(res, d.setCookie);
      next();
    }, next);
  };
  middleware.core = core;  // its jwks and refreshes counters, for tests and monitoring
  return middleware;
}

export default anteroom;
