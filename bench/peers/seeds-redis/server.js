// The seeds' design as a yardstick (bench/cluster_bench.sh): a Node.js queue server keeping
// each room in a Redis sorted set, as seeds 000 and 002 describe (docs/seeds.md): a join is
// ZADD with the join time as score, then ZRANK for the position; a status is ZRANK. Several
// such processes can share one Redis, as anteroom's nodes do.
// usage: node server.js PORT REDIS_PORT
"use strict";
const http = require("http");
const crypto = require("crypto");
const Redis = require("ioredis");

const port = Number(process.argv[2] || 3000);
const redis = new Redis({ port: Number(process.argv[3] || 6379), host: "127.0.0.1" });

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

const route = /^\/v1\/rooms\/([A-Za-z0-9_-]{1,64})\/tickets(?:\/([A-Za-z0-9_-]{1,64}))?$/;

http
  .createServer((req, res) => {
    const m = route.exec(req.url);
    if (!m) return send(res, 404, { error: "not_found" });
    const key = `seeds:{${m[1]}}:queue`;
    req.resume();
    req.on("end", async () => {
      try {
        if (req.method === "POST" && !m[2]) {
          const ticket = crypto.randomUUID();
          await redis.zadd(key, Date.now(), ticket);
          const rank = await redis.zrank(key, ticket);
          return send(res, 201, { ticket, status: "WAITING", position: rank + 1 });
        }
        if (req.method === "GET" && m[2]) {
          const rank = await redis.zrank(key, m[2]);
          if (rank === null) return send(res, 404, { error: "ticket_not_found" });
          return send(res, 200, { ticket: m[2], status: "WAITING", position: rank + 1 });
        }
        send(res, 405, { error: "method_not_allowed" });
      } catch (e) {
        send(res, 503, { error: "unavailable", message: String(e) });
      }
    });
  })
  .listen(port, "127.0.0.1");
