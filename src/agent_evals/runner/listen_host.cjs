// Preloaded into `promptfoo view` by `agent-evals view` (NODE_OPTIONS=--require): Promptfoo's viewer
// calls server.listen(port) with no host, which listens on every interface. Here a listen without a
// host gets AGENT_EVALS_LISTEN_HOST (127.0.0.1 unless the user asked to share: --host 0.0.0.0).
"use strict";

const net = require("node:net");

const host = process.env.AGENT_EVALS_LISTEN_HOST;
if (host) {
  const listen = net.Server.prototype.listen;
  net.Server.prototype.listen = function listenOnHost(...args) {
    const [first, second] = args;
    const port = typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first));
    if (port && (second === undefined || typeof second === "function")) {
      return listen.call(this, first, host, ...args.slice(1));
    }
    if (first && typeof first === "object" && !Array.isArray(first) && first.port !== undefined && !first.host
        && !first.path && !first.fd && !first.handle) {
      return listen.call(this, { ...first, host }, ...args.slice(1));
    }
    return listen.apply(this, args);
  };
}
