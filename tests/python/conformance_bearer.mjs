// Loaded into the MCP conformance suite's node (`node --import`) by
// test_http.py's conformance test: adds `Authorization: Bearer $TMUX_MCP_TOKEN` to every
// HTTP request for $TMUX_MCP_ORIGIN, since the suite has no option for a
// header and `tmux-mcp serve --http` answers nothing else without it. It
// installs undici's global dispatcher, which both node's fetch (the SDK
// client the scenarios use) and undici's `request` (the DNS-rebinding
// scenario) send through. Requests that already carry an Authorization
// header are left alone.
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const token = process.env.TMUX_MCP_TOKEN;
const origin = process.env.TMUX_MCP_ORIGIN;
if (!token || !origin) {
    throw new Error("conformance-bearer.mjs needs TMUX_MCP_TOKEN and TMUX_MCP_ORIGIN");
}
// The undici the suite itself imports (in .npm-tools/, beside it).
const require = createRequire(new URL("../../.npm-tools/node_modules/@modelcontextprotocol/conformance/package.json", import.meta.url));
const { Agent, setGlobalDispatcher } = await import(pathToFileURL(require.resolve("undici")).href);

const value = `Bearer ${token}`;
function withToken(headers) {
    if (headers == null) return { authorization: value };
    if (Array.isArray(headers)) {
        for (let i = 0; i < headers.length; i += 2) {
            if (String(headers[i]).toLowerCase() === "authorization") return headers;
        }
        return [...headers, "authorization", value];
    }
    if (typeof headers[Symbol.iterator] === "function" && typeof headers !== "string") {
        const pairs = [...headers];
        if (pairs.some(([k]) => String(k).toLowerCase() === "authorization")) return headers;
        return [...pairs.flat(), "authorization", value];
    }
    if (Object.keys(headers).some((k) => k.toLowerCase() === "authorization")) return headers;
    return { ...headers, authorization: value };
}

setGlobalDispatcher(
    new Agent().compose((dispatch) => (opts, handler) => {
        const target = opts.origin instanceof URL ? opts.origin.origin : String(opts.origin ?? "");
        if (target === origin) {
            opts = { ...opts, headers: withToken(opts.headers) };
        }
        return dispatch(opts, handler);
    }),
);
