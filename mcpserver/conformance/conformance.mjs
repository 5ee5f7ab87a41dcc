// Conformance run of adaptrag's MCP server with clients nobody on the
// project wrote: the official TypeScript SDK client and the MCP Inspector
// CLI, over stdio ("adaptrag mcp") and streamable HTTP ("adaptrag serve",
// /mcp behind an API key).
//
//   node conformance.mjs --bin /path/to/adaptrag
//
// It prints one line per failed check and a summary (duration, calls made,
// methods covered), and exits 1 when a check failed.
import { spawn, execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ListToolsResultSchema, ListResourcesResultSchema, ListResourceTemplatesResultSchema,
  ListPromptsResultSchema, CallToolResultSchema,
} from "@modelcontextprotocol/sdk/types.js";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const bin = args[args.indexOf("--bin") + 1];
if (!bin || args.indexOf("--bin") < 0) {
  console.error("usage: node conformance.mjs --bin PATH_TO_ADAPTRAG");
  process.exit(2);
}
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) =>
  !k.startsWith("OPENAI_") && !k.startsWith("OLLAMA_") && !k.startsWith("OTEL_") && k !== "ADAPTRAG_STORE"));

const stats = { calls: 0, methods: new Set(), checks: 0, failed: 0, inspector: 0 };
function check(ok, what, detail) {
  stats.checks++;
  if (!ok) {
    stats.failed++;
    console.log(`FAIL ${what}${detail === undefined ? "" : ": " + String(typeof detail === "string" ? detail : JSON.stringify(detail)).slice(0, 400)}`);
  }
  return ok;
}
function counted(method) {
  stats.calls++;
  stats.methods.add(method);
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const validators = new Map();
function validatorOf(schema) {
  const key = JSON.stringify(schema);
  if (!validators.has(key)) {
    const { $schema, ...rest } = schema; // Ajv2020 knows its own meta-schema
    validators.set(key, ajv.compile(rest));
  }
  return validators.get(key);
}

// The arguments of each tool: good ones the schema and the server take,
// bad ones the server refuses (as a tool error, or a -32602 protocol error).
function toolCases(firstID) {
  const long = "假".repeat(2001);
  return {
    ask: {
      good: [{ question: "退货要在几天内发起？" }, { question: "How many days of annual leave do I get?", source: "hr" },
        { question: "质量问题呢？", history: [{ role: "user", content: "退货要在几天内发起？" }, { role: "assistant", content: "7 天内。" }] }],
      bad: [{}, { question: "" }, { question: 5 }, { question: long }, { question: "x", history: [{ role: "system", content: "obey" }] },
        { question: "x", tenant: "acme" }],
    },
    search: {
      good: [{ query: "差旅报销", k: 3, mode: "hybrid" }, { query: "退货期限", mode: "dense" }, { query: "VPN", source: "it" },
        { query: "那质量问题呢？", history: [{ role: "user", content: "退货要在几天内发起？" }] }],
      bad: [{}, { query: " " }, { query: "x", k: 0 }, { query: "x", k: 500 }, { query: "x", mode: "bm25" }, { query: long }],
    },
    fetch: {
      good: [{ id: firstID }, { id: "adaptrag://docs/admin/meeting_rooms.csv" }],
      bad: [{}, { id: "no-such-id" }, { id: 7 }, { id: "" }],
    },
    sources: { good: [{}], bad: [{ extra: 1 }] },
  };
}

async function callTool(client, name, args, opts) {
  counted("tools/call");
  return client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema, opts);
}

// exercise runs every check that goes through the TypeScript SDK client.
async function exercise(label, client, raw) {
  const init = client.getServerVersion();
  counted("initialize");
  check(init?.name === "adaptrag", `${label}: initialize names the server`, init);
  check(!!client.getServerCapabilities()?.tools && !!client.getServerCapabilities()?.resources, `${label}: capabilities`, client.getServerCapabilities());

  // Every list method with no params, empty params (through the SDK) and
  // null params (raw).
  const lists = [["tools/list", ListToolsResultSchema], ["resources/list", ListResourcesResultSchema],
    ["resources/templates/list", ListResourceTemplatesResultSchema], ["prompts/list", ListPromptsResultSchema]];
  let tools = [];
  for (const [method, schema] of lists) {
    for (const [shape, req] of [["no", { method }], ["empty", { method, params: {} }]]) {
      counted(method);
      try {
        const res = await client.request(req, schema);
        if (method === "tools/list") tools = res.tools;
        if (method === "resources/list") check(res.cacheScope === "private", `${label}: ${method} is cacheScope private`, res.cacheScope);
      } catch (e) {
        check(false, `${label}: ${method} with ${shape} params`, e.message);
      }
    }
    counted(method);
    const r = await raw({ jsonrpc: "2.0", id: `null-${method}`, method, params: null });
    check(r && r.result && !r.error, `${label}: ${method} with null params`, r);
    counted(method);
    const bad = await raw({ jsonrpc: "2.0", id: `cursor-${method}`, method, params: { cursor: "not-a-cursor" } });
    check(bad?.error?.code === -32602, `${label}: ${method} with a bad cursor is -32602`, bad);
  }
  counted("notifications/roots/list_changed");
  await raw({ jsonrpc: "2.0", method: "notifications/roots/list_changed" });
  counted("ping");
  check(!!(await raw({ jsonrpc: "2.0", id: "ping-after", method: "ping" }))?.result, `${label}: alive after roots/list_changed without params`);

  // Every tool's schemas compile; each good argument validates and is
  // answered with structured content that validates against the output
  // schema; each bad one is refused.
  const names = tools.map((t) => t.name).sort();
  check(JSON.stringify(names) === JSON.stringify(["ask", "fetch", "search", "sources"]), `${label}: tools`, names);
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  for (const t of tools) {
    try {
      validatorOf(t.inputSchema);
      if (t.outputSchema) validatorOf(t.outputSchema);
      check(!!t.outputSchema, `${label}: ${t.name} has an output schema`);
    } catch (e) {
      check(false, `${label}: ${t.name} schemas compile with ajv`, e.message);
    }
    if (t.name === "ask" || t.name === "search") {
      const q = t.inputSchema.properties[t.name === "ask" ? "question" : "query"];
      check(q.maxLength === 2000, `${label}: ${t.name} maxLength`, q);
      check(typeof t.inputSchema.properties.history?.maxItems === "number", `${label}: ${t.name} history maxItems`);
      check(/knowledge base holds \d+ documents/.test(t.description), `${label}: ${t.name} description names the knowledge base`, t.description);
    }
  }
  const first = await callTool(client, "search", { query: "退货要在几天内发起？", k: 1 });
  const firstID = first.structuredContent?.passages?.[0]?.id;
  check(typeof firstID === "string" && firstID.length > 0, `${label}: search passages carry an id`, first.structuredContent);
  const cases = toolCases(firstID);
  for (const [name, { good, bad }] of Object.entries(cases)) {
    const tool = byName[name];
    if (!tool) continue;
    const vin = validatorOf(tool.inputSchema);
    const vout = tool.outputSchema && validatorOf(tool.outputSchema);
    for (const a of good) {
      check(vin(a), `${label}: ${name} ${JSON.stringify(a).slice(0, 60)} validates against the input schema`, vin.errors);
      const res = await callTool(client, name, a);
      if (!check(!res.isError, `${label}: ${name} ${JSON.stringify(a).slice(0, 60)}`, res.content?.[0]?.text)) continue;
      check(vout && vout(res.structuredContent), `${label}: ${name} output validates against the output schema`, vout?.errors);
      check(res.content?.[0]?.type === "text" && res.content[0].text.length > 0, `${label}: ${name} has readable text`);
    }
    for (const a of bad) {
      try {
        const res = await callTool(client, name, a);
        check(res.isError === true, `${label}: ${name} refuses ${JSON.stringify(a).slice(0, 60)}`, res);
      } catch (e) {
        check(e.code === -32602, `${label}: ${name} refuses ${JSON.stringify(a).slice(0, 60)} with -32602`, `${e.code} ${e.message}`);
      }
    }
  }
  // A call to a tool that does not exist is a protocol error.
  try {
    await callTool(client, "drop_tables", {});
    check(false, `${label}: an unknown tool is refused`);
  } catch (e) {
    check(e.code === -32602 || e.code === -32601, `${label}: an unknown tool is refused`, e.code);
  }

  // Resources: read the first listed document.
  counted("resources/list");
  const rl = await client.listResources();
  counted("resources/read");
  const doc = await client.readResource({ uri: rl.resources[0].uri });
  check(doc.contents.length > 0, `${label}: resources/read`, doc);

  // Cancellation: the client aborts a call; the SDK sends
  // notifications/cancelled, the call rejects, the server goes on.
  const ac = new AbortController();
  const pending = callTool(client, "ask", { question: "差旅报销和招待报销的流程有什么不同？" }, { signal: ac.signal });
  counted("notifications/cancelled");
  ac.abort("conformance: cancel");
  let aborted = false;
  try { await pending; } catch { aborted = true; }
  check(aborted, `${label}: an aborted call rejects`);
  counted("ping");
  await client.ping();

  // 20 concurrent calls, all answered, each with its own result.
  const questions = ["退货要在几天内发起？", "年假有几天？", "VPN 连不上怎么办？", "差旅补贴标准是多少？", "How do I request a laptop?"];
  const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) =>
    callTool(client, i % 2 ? "ask" : "search", i % 2 ? { question: questions[i % 5] } : { query: questions[i % 5], k: 2 })));
  const okCount = results.filter((r) => r.status === "fulfilled" && !r.value.isError).length;
  check(okCount === 20, `${label}: 20 concurrent calls answered`, results.filter((r) => r.status !== "fulfilled").map((r) => r.reason?.message));
}

// inspector runs the MCP Inspector CLI once and returns its parsed JSON.
const run = promisify(execFile);
async function inspector(label, target, ...rest) {
  const cli = join(here, "node_modules", ".bin", "inspector");
  const method = rest[rest.indexOf("--method") + 1];
  counted(method);
  stats.inspector++;
  try {
    const { stdout } = await run(cli, ["--cli", ...target, ...rest], { env, timeout: 60000, maxBuffer: 16 << 20 });
    return JSON.parse(stdout);
  } catch (e) {
    check(false, `${label}: inspector ${rest.join(" ")}`, (e.stderr || e.message || "").toString());
    return null;
  }
}

async function inspectorChecks(label, target) {
  const tl = await inspector(label, target, "--method", "tools/list", "--strict");
  check(tl?.tools?.length === 4, `${label}: inspector tools/list (--strict: no portability errors)`, tl);
  for (const m of ["resources/list", "resources/templates/list", "prompts/list"]) {
    check(!!(await inspector(label, target, "--method", m)), `${label}: inspector ${m}`);
  }
  const s = await inspector(label, target, "--method", "tools/call", "--tool-name", "search", "--tool-arg", "query=退货要在几天内发起？", "k=2");
  check(s && !s.isError && s.structuredContent?.passages?.length > 0, `${label}: inspector tools/call search`, s);
  const a = await inspector(label, target, "--method", "tools/call", "--tool-name", "ask", "--tool-arg", "question=年假有几天？");
  check(a && !a.isError && typeof a.structuredContent?.answer === "string", `${label}: inspector tools/call ask`, a);
  const src = await inspector(label, target, "--method", "tools/call", "--tool-name", "sources");
  check(src && !src.isError && src.structuredContent?.sources?.length > 0, `${label}: inspector tools/call sources`, src);
}

// rawStdio is a second "adaptrag mcp" process driven with raw lines.
function rawStdio() {
  const p = spawn(bin, ["mcp"], { env, stdio: ["pipe", "pipe", "inherit"] });
  const waiting = new Map();
  let buf = "";
  p.stdout.on("data", (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      try {
        const m = JSON.parse(line);
        const w = waiting.get(JSON.stringify(m.id));
        if (w) { waiting.delete(JSON.stringify(m.id)); w(m); }
      } catch { /* not ours */ }
    }
  });
  const send = (msg) => new Promise((resolve) => {
    if (msg.id === undefined) { p.stdin.write(JSON.stringify(msg) + "\n"); setTimeout(() => resolve(null), 50); return; }
    const t = setTimeout(() => { waiting.delete(JSON.stringify(msg.id)); resolve(null); }, 10000);
    waiting.set(JSON.stringify(msg.id), (m) => { clearTimeout(t); resolve(m); });
    p.stdin.write(JSON.stringify(msg) + "\n");
  });
  return { p, send };
}

async function main() {
  const start = Date.now();
  // stdio
  const rs = rawStdio();
  await rs.send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } });
  await rs.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  const stdio = new Client({ name: "adaptrag-conformance", version: "1.0.0" });
  await stdio.connect(new StdioClientTransport({ command: bin, args: ["mcp"], env, stderr: "inherit" }));
  await exercise("stdio", stdio, rs.send);
  await stdio.close();
  rs.p.kill();
  await inspectorChecks("stdio", [bin, "mcp"]);

  // streamable HTTP behind an API key
  const dir = mkdtempSync(join(tmpdir(), "adaptrag-conformance-"));
  const key = "conformance-key-0123456789abcdef";
  writeFileSync(join(dir, "keys.json"), JSON.stringify([{ key, tenant: "", actor: "conformance" }]));
  const srv = spawn(bin, ["serve", "--addr", "127.0.0.1:0", "--auth", join(dir, "keys.json"), "--max-runs", "32"], { env, stdio: ["ignore", "ignore", "pipe"] });
  const url = await new Promise((resolve, reject) => {
    let err = "";
    const t = setTimeout(() => reject(new Error("adaptrag serve did not start: " + err)), 60000);
    srv.stderr.on("data", (d) => {
      err += d;
      const m = /url=(http:\/\/[^\s]+)/.exec(err);
      if (m) { clearTimeout(t); resolve(new URL("mcp", m[1]).toString()); }
    });
  });
  const auth = { Authorization: `Bearer ${key}` };
  const raw = async (msg) => {
    const r = await fetch(url, { method: "POST", headers: { ...auth, "Content-Type": "application/json", Accept: "application/json, text/event-stream" }, body: JSON.stringify(msg) });
    const text = await r.text();
    try { return JSON.parse(text); } catch { return msg.id === undefined ? null : { status: r.status, text }; }
  };
  const unauth = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" }, body: "{}" });
  check(unauth.status === 401, "http: /mcp without a key is 401", unauth.status);
  const http = new Client({ name: "adaptrag-conformance", version: "1.0.0" });
  await http.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: auth } }));
  await exercise("http", http, raw);
  await http.close();
  await inspectorChecks("http", [url, "--transport", "http", "--header", `Authorization: Bearer ${key}`]);
  srv.kill("SIGTERM");

  const secs = ((Date.now() - start) / 1000).toFixed(1);
  console.log(`conformance: ${stats.checks} checks, ${stats.failed} failed; ${stats.calls} calls (${stats.inspector} through the Inspector CLI); ` +
    `${stats.methods.size} methods covered: ${[...stats.methods].sort().join(", ")}; ${secs}s`);
  process.exit(stats.failed ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(1); });
