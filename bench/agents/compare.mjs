// Side by side: the agents' own session code against our harness, on the same generated files.
// Run through scripts/bench-agents.sh (it installs the agents into a temporary folder and passes
// --install). Plain Node ESM, no dependencies.
//
//   node compare.mjs --install DIR --root REPO [--sizes 1k,10k] [--dialects pi,omp] [--runs 5]
//                    [--seed 1] [--data-dir target/bench-data] [--ours target/bench.json]
//                    [--json target/bench-agents.json]  (--ours may list several files, a,b) [--markdown target/bench-agents.md]
//                    [--reuse target/bench-agents.json]
//
// The pi file is measured with pi (Node), the omp file with omp (Bun). Open runs in a fresh
// process per sample; the reads run in one process, the writes in another, on a scratch copy.
// --reuse skips the agents and prints the table from a saved --json with the current ours.

import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

function parseArgs(argv) {
	const args = {
		sizes: "1k,10k",
		dialects: "pi,omp",
		runs: 5,
		seed: 1,
		"data-dir": "target/bench-data",
		ours: "target/bench.json",
		json: "target/bench-agents.json",
	};
	for (let i = 0; i < argv.length; i += 2) {
		const key = argv[i].replace(/^--/, "");
		if (argv[i + 1] === undefined) throw new Error(`${argv[i]} needs a value`);
		args[key] = argv[i + 1];
	}
	args.runs = Number(args.runs);
	args.sizes = String(args.sizes).split(",").filter(Boolean);
	args.dialects = String(args.dialects).split(",").filter(Boolean);
	if (!args.root) throw new Error("--root (the repository) is required");
	const abs = p => (p && !path.isAbsolute(p) ? path.join(args.root, p) : p);
	for (const k of ["data-dir", "json", "markdown", "reuse"]) args[k] = abs(args[k]);
	args.ours = String(args.ours).split(",").filter(Boolean).map(abs);
	return args;
}

const log = msg => process.stderr.write(`${msg}\n`);

// ------------------------------------------------------------------------------------------------
// Rows of the table: the agent's figure (probe key) and the harness op it is set against.

const ROWS = [
	{ op: "open (fresh process)", from: "open", key: "openMs", ours: o => o.startsWith("open:") },
	{ op: "peak RSS: open (fresh process)", from: "open", key: "peakRssOpenKb", unit: "MB", ours: o => o === "peak RSS: open (fresh process)" },
	{ op: "  RSS before open (runtime + modules)", from: "open", key: "rssBeforeKb", unit: "MB", ours: null },
	{ op: "  RSS held after open", from: "open", key: "rssAfterOpenKb", unit: "MB", ours: o => o === "RSS held after open" },
	{ op: "  first window right after open (same process)", from: "open", key: "firstWindowMs", ours: o => o.startsWith("first window right after open") },
	{ op: "peak RSS: open + first window (fresh process)", from: "open", key: "peakRssKb", unit: "MB", ours: o => o.startsWith("peak RSS: open + first window") },
	{ op: "getTree", from: "reads", key: "getTree", ours: o => o.startsWith("getTree") },
	{ op: "getBranch (leaf)", from: "reads", key: "getBranch", ours: o => o.startsWith("getBranch") },
	{ op: "buildSessionContext (leaf)", from: "reads", key: "buildSessionContext", ours: o => o.startsWith("buildSessionContext") },
	{ op: "first window of rows", from: "reads", key: "firstWindow", ours: o => o.startsWith("first window of rows") },
	{ op: "full rows, default filter", from: "reads", key: "rows:default", ours: o => o === "full rows, default filter" },
	{ op: "full rows, no-tools filter", from: "reads", key: "rows:no-tools", ours: o => o === "full rows, no-tools filter" },
	{ op: "full rows, user-only filter", from: "reads", key: "rows:user-only", ours: o => o === "full rows, user-only filter" },
	{ op: "full rows, labeled-only filter", from: "reads", key: "rows:labeled-only", ours: o => o === "full rows, labeled-only filter" },
	{ op: "full rows, all filter", from: "reads", key: "rows:all", ours: o => o === "full rows, all filter" },
	{ op: "search, 2-3 tokens", from: "reads", key: "search", ours: o => o.startsWith("search") },
	{ op: "navigate: branch(id)", from: "reads", key: "navigate", ours: o => o.startsWith("navigate: branch(id)") },
	{ op: "append (message)", from: "writes", key: "append", ours: o => o.startsWith("append") },
	{ op: "label", from: "writes", key: "label", ours: o => o === "label" },
	{ op: "navigate: branch_with_summary", from: "writes", key: "branchWithSummary", ours: o => o.startsWith("navigate: branch_with_summary") },
	{ op: "  the write alone (ours: open O_APPEND + write + fdatasync)", from: null, key: null, ours: o => o.startsWith("the write alone") },
	{ op: "createBranchedSession (leaf path, file written)", from: "writes", key: "createBranchedSession", ours: o => o.startsWith("createBranchedSession") },
];

const LEGEND =
	"agent ÷ ours: above 1× sessiontree is faster (or smaller), below 1× the agent is. The agents' writes " +
	"(append, label, branch_with_summary) do not fsync; ours include an fdatasync.";

function median(xs) {
	const s = xs.filter(x => Number.isFinite(x)).sort((a, b) => a - b);
	if (s.length === 0) return null;
	const n = s.length;
	return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

function fmt(v, unit) {
	if (v === null || v === undefined || !Number.isFinite(v)) return "-";
	if (unit === "MB") return `${v.toFixed(0)} MB`;
	if (v >= 1000) return `${(v / 1000).toFixed(2)} s`;
	if (v >= 100) return `${v.toFixed(0)} ms`;
	if (v >= 10) return `${v.toFixed(1)} ms`;
	if (v >= 1) return `${v.toFixed(2)} ms`;
	return `${v.toFixed(3)} ms`;
}

function cell(samples, unit) {
	const m = median(samples);
	if (m === null) return "-";
	const min = Math.min(...samples);
	const max = Math.max(...samples);
	const short = x => fmt(x, unit).replace(/ (ms|MB|s)$/, "");
	return samples.length > 1 ? `${fmt(m, unit)} [${short(min)}-${short(max)}]` : fmt(m, unit);
}

function ratio(agent, ours, unit) {
	if (agent === null || ours === null || !(ours > 0)) return "-";
	// Both below a microsecond: the ratio of two timer readings says nothing.
	if (unit !== "MB" && agent < 0.001 && ours < 0.001) return "-";
	const r = agent / ours;
	return r >= 100 ? `${r.toFixed(0)}×` : r >= 10 ? `${r.toFixed(1)}×` : `${r.toFixed(2)}×`;
}

// ------------------------------------------------------------------------------------------------
// Files

/** The harness's generated file for (dialect, size, seed): the highest data version present. */
function dataFile(dir, dialect, size, seed) {
	if (!fs.existsSync(dir)) return null;
	const re = new RegExp(`^v(\\d+)-${dialect}-${size}-s${seed}\\.jsonl$`);
	const found = fs
		.readdirSync(dir)
		.map(name => ({ name, m: name.match(re) }))
		.filter(x => x.m)
		.sort((a, b) => Number(b.m[1]) - Number(a.m[1]));
	return found.length ? path.join(dir, found[0].name) : null;
}

function copyFresh(src, dst) {
	fs.mkdirSync(path.dirname(dst), { recursive: true });
	fs.rmSync(dst, { force: true });
	fs.copyFileSync(src, dst);
	return dst;
}

// ------------------------------------------------------------------------------------------------
// Running the probes

const AGENT_OF = { pi: "pi", omp: "omp" };

function runtimeFor(args, agent) {
	const dir = path.join(args.install, agent);
	const bin = agent === "omp" ? path.join(dir, "node_modules", ".bin", "bun") : process.execPath;
	return { dir, bin };
}

function probe(args, agent, mode, file, extra = []) {
	const { dir, bin } = runtimeFor(args, agent);
	const home = path.join(args.work, "home");
	fs.mkdirSync(home, { recursive: true });
	const argv = ["probe.mjs", "--agent", agent, "--mode", mode, "--file", file, "--runs", String(args.runs), ...extra];
	const res = spawnSync(bin, argv, {
		cwd: dir,
		// A private HOME: the agents write logs, breadcrumbs and settings under it.
		env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, ".config"), NO_COLOR: "1" },
		encoding: "utf8",
		maxBuffer: 64 << 20,
		stdio: ["ignore", "pipe", "inherit"],
	});
	if (res.error) throw new Error(`${agent} ${mode} probe could not start (${bin}): ${res.error.message}`);
	if (res.status !== 0) throw new Error(`${agent} ${mode} probe failed (exit ${res.status}${res.signal ? `, ${res.signal}` : ""}) on ${file}`);
	const line = res.stdout.trim().split("\n").pop();
	try {
		return JSON.parse(line);
	} catch {
		throw new Error(`${agent} ${mode} probe printed no JSON: ${res.stdout.slice(-500)}`);
	}
}

function measureAgent(args, dialect, size, file) {
	const agent = AGENT_OF[dialect];
	const bytes = fs.statSync(file).size;
	const readCopy = copyFresh(file, path.join(args.work, "read", path.basename(file)));
	const samples = {};
	let version = null;
	let entries = null;

	log(`  ${size} ${dialect} (${(bytes / 1e6).toFixed(0)} MB) with ${agent}: open, ${args.runs} fresh processes…`);
	const open = { openMs: [], firstWindowMs: [], peakRssOpenKb: [], peakRssKb: [], rssBeforeKb: [], rssAfterOpenKb: [] };
	for (let i = 0; i < args.runs; i++) {
		const p = probe(args, agent, "open", readCopy);
		version = p.version;
		entries = p.entries;
		for (const k of Object.keys(open)) open[k].push(k.endsWith("Kb") ? p[k] / 1024 : p[k]);
	}
	samples.open = open;

	log(`  ${size} ${dialect}: reads…`);
	const reads = probe(args, agent, "reads", readCopy);
	samples.reads = reads.samples;

	const after = fs.statSync(readCopy);
	if (after.size !== bytes) log(`  warning: ${agent} changed the size of the file it only read (${bytes} -> ${after.size})`);

	log(`  ${size} ${dialect}: writes on a scratch copy…`);
	const scratch = copyFresh(file, path.join(args.work, "scratch", path.basename(file)));
	const writes = probe(args, agent, "writes", scratch, ["--originalBytes", String(bytes)]);
	samples.writes = writes.samples;
	fs.rmSync(path.join(args.work, "scratch"), { recursive: true, force: true });
	fs.rmSync(path.join(args.work, "read"), { recursive: true, force: true });

	return {
		size,
		dialect,
		agent,
		version,
		file: path.basename(file),
		bytes,
		entries,
		info: { ...reads.info, ...writes.info },
		samples,
	};
}

// ------------------------------------------------------------------------------------------------
// Our side: the harness JSON

/** The harness --json files, in the order given; each (size, dialect) comes from the first that has it. */
function loadOurs(files, root) {
	const docs = [];
	for (const file of files) {
		if (!fs.existsSync(file)) {
			log(`note: no harness figures at ${file} (run the harness with --json first, or pass --run-ours)`);
			continue;
		}
		const doc = JSON.parse(fs.readFileSync(file, "utf8"));
		if (!Array.isArray(doc.results)) throw new Error(`${file} has no "results" array (not a harness --json file?)`);
		doc.name = path.relative(root, file);
		docs.push(doc);
	}
	return docs;
}

/** The harness figures for one size and dialect: { doc, rows } from the first file that has them. */
function oursFor(ours, size, dialect) {
	for (const doc of ours) {
		const rows = doc.results.filter(r => r.size === size && r.dialect === dialect);
		if (rows.length) return { doc, rows };
	}
	return { doc: null, rows: [] };
}

function ourFigure(rows, row) {
	if (!row.ours) return null;
	const hit = rows.find(r => row.ours(String(r.op).trim()));
	if (!hit || hit.median === null || hit.median === undefined) return null;
	return hit;
}

// ------------------------------------------------------------------------------------------------
// The table

function tables(measured, ours) {
	let text = "";
	let md = "";
	for (const m of measured) {
		const mb = (m.bytes / 1e6).toFixed(0);
		const agentHead = `${m.agent} ${String(m.version).split("@").pop()} median [min-max]`;
		const title = `${m.size} ${m.dialect} (${mb} MB)`;
		const { doc, rows: oursRows } = oursFor(ours, m.size, m.dialect);
		const oursBytes = oursRows[0]?.bytes;
		const when = doc?.unixTime ? new Date(doc.unixTime * 1000).toISOString().slice(0, 16).replace("T", " ") : "?";
		const notes = [];
		if (!doc) notes.push("no harness figures for this size and dialect in the --ours file(s)");
		else notes.push(`sessiontree: ${doc.name}, ${doc.runs} runs, ${when} UTC`);
		if (doc && oursBytes !== undefined && oursBytes !== m.bytes)
			notes.push(`warning: the harness measured a ${oursBytes}-byte file, the agent ${m.bytes} bytes`);
		const note = `  (${notes.join("; ")})`;
		const lines = [];
		for (const row of ROWS) {
			const agentSamples = (row.from && m.samples[row.from]?.[row.key]) || [];
			const a = median(agentSamples);
			const o = ourFigure(oursRows, row);
			const oSamples = o ? (o.samples?.length ? o.samples : [o.median]) : [];
			lines.push([row.op, cell(agentSamples, row.unit), o ? cell(oSamples, row.unit) : "-", ratio(a, o ? o.median : null, row.unit)]);
		}
		const heads = [title, agentHead, "sessiontree median [min-max]", "agent ÷ ours"];
		const widths = heads.map((h, i) => Math.max(h.length, ...lines.map(l => l[i].length)));
		const row = cols => cols.map((c, i) => (i === 3 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join(" | ");
		text += `\n${row(heads)}\n${widths.map(w => "-".repeat(w)).join("-|-")}\n${lines.map(row).join("\n")}\n${note}\n`;
		md += `\n| ${heads.join(" | ")} |\n|---|---|---|---:|\n`;
		for (const l of lines) {
			const op = l[0].startsWith("  ") ? `&nbsp;&nbsp;${l[0].trim()}` : l[0];
			md += `| ${op} | ${l[1]} | ${l[2]} | ${l[3]} |\n`;
		}
		md += `\n${note.trim().replace(/^\(|\)$/g, "")}\n`;
	}
	return { text, md };
}

// ------------------------------------------------------------------------------------------------

function main() {
	const args = parseArgs(process.argv.slice(2));
	const ours = loadOurs(args.ours, args.root);

	let measured;
	if (args.reuse) {
		if (!fs.existsSync(args.reuse)) throw new Error(`--reuse: ${args.reuse} does not exist`);
		measured = JSON.parse(fs.readFileSync(args.reuse, "utf8")).measured;
		log(`agents' figures reused from ${args.reuse}`);
	} else {
		if (!args.install || !args.work) throw new Error("--install and --work are required unless --reuse is given");
		measured = [];
		for (const size of args.sizes) {
			for (const dialect of args.dialects) {
				if (!AGENT_OF[dialect]) throw new Error(`unknown dialect ${dialect} (pi or omp)`);
				const file = dataFile(args["data-dir"], dialect, size, args.seed);
				if (!file) {
					throw new Error(
						`no generated ${dialect} ${size} file (seed ${args.seed}) in ${args["data-dir"]}: run the harness first, e.g.\n` +
							`  cargo bench -p sessiontree --bench harness -- --sizes ${size} --dialects ${dialect} --runs ${args.runs} --json target/bench.json`,
					);
				}
				measured.push(measureAgent(args, dialect, size, file));
			}
		}
		if (args.json) {
			fs.mkdirSync(path.dirname(args.json), { recursive: true });
			const doc = { runs: args.runs, seed: args.seed, unixTime: Math.floor(Date.now() / 1000), measured };
			fs.writeFileSync(args.json, `${JSON.stringify(doc, null, 1)}\n`);
			log(`wrote ${args.json}`);
		}
	}

	const { text, md } = tables(measured, ours);
	process.stdout.write(text);
	process.stdout.write(`\n${LEGEND}\n`);
	if (args.markdown) {
		fs.mkdirSync(path.dirname(args.markdown), { recursive: true });
		fs.writeFileSync(args.markdown, md.trimStart());
		log(`wrote ${args.markdown}`);
	}
}

try {
	main();
} catch (err) {
	log(`bench-agents: ${err.message}`);
	process.exit(2);
}
