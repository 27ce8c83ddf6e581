// The fetch-style front end for edge runtimes (Cloudflare Workers, Deno, Vercel Edge, Node's
// own fetch types): Request in, Response out, WebCrypto only.
import { Core } from "./core.js";

// One Core (and so one JWKS cache) per options object: keep the options in a constant.
const cores = new WeakMap();
function coreFor(options) {
  let core = cores.get(options);
  if (!core) {
    core = new Core(options);
    cores.set(options, core);
  }
  return core;
}

function requestOf(request) {
  const url = new URL(request.url);
  return {
    method: request.method,
    accept: request.headers.get("accept"),
    cookie: request.headers.get("cookie"),
    target: url.pathname + url.search,
    secure: url.protocol === "https:",
    raw: request,
  };
}

function responseOf(refusal) {
  return new Response(refusal.body === "" ? null : refusal.body,
    { status: refusal.status, headers: refusal.headers });
}

// The full decision: { response: Response | null, anteroom: {ticket, user, room, expires_at}
// | null, setCookie: string | null }. response null: admitted (or an excluded path), go on,
// and add setCookie (a refreshed admission, with verify_key) to the answer if it is not null.
export async function admission(request, options) {
  const d = await coreFor(options).decide(requestOf(request));
  if (d.refusal) return { response: responseOf(d.refusal), anteroom: null, setCookie: null };
  return { response: null, anteroom: d.admission ?? null, setCookie: d.setCookie ?? null };
}

// null: admitted, go on; else the Response to send. It never refreshes (it could not hand
// the visitor the new cookie): with verify_key, use admission() or withAnteroom().
export async function check(request, options) {
  const d = await coreFor(options).decide(requestOf(request), { refresh: false });
  return d.refusal ? responseOf(d.refusal) : null;
}

// A handler wrapped: handler(request, anteroom, ...rest) runs only for admitted requests,
// and a refreshed cookie is added to its Response.
export function withAnteroom(handler, options) {
  coreFor(options);  // bad options throw now
  return async (request, ...rest) => {
    const a = await admission(request, options);
    if (a.response) return a.response;
    const res = await handler(request, a.anteroom, ...rest);
    if (!a.setCookie) return res;
    const out = new Response(res.body, res);  // a fetched Response's headers are immutable
    out.headers.append("Set-Cookie", a.setCookie);
    return out;
  };
}

// The Core behind an options object (its jwks and refreshes counters).
export function coreOf(options) {
  return coreFor(options);
}
