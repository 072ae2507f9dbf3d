// One measuring process for one agent (pi under Node, omp under Bun), driven by compare.mjs.
// It runs from the temporary install folder (the shell script copies it there), so that the
// agents' packages resolve from that folder's node_modules. It only calls the agents' exported
// API; nothing of their code is copied here.
//
//   probe.mjs --agent pi|omp --mode open|reads|writes --file F --runs N [--height 40] [--width 120]
//
// open:   one fresh open (this process does nothing else first): open time, first window, VmHWM.
// reads:  open once, then N runs of each read operation.
// writes: open F (a scratch copy), then N runs of each write; createBranchedSession re-opens F
//         before each run (it switches the manager to the new file) and deletes what it wrote.
// Prints one JSON object on stdout; progress goes to stderr.

import * as fs from "node:fs";
import * as path from "node:path";

const SEARCH = "parse config"; // the harness's query (server/lsp/benches/harness.rs)
const FILTERS = ["default", "no-tools", "user-only", "labeled-only", "all"];

function parseArgs(argv) {
	const args = { height: 40, width: 120, runs: 5 };
	for (let i = 0; i < argv.length; i += 2) {
		const key = argv[i].replace(/^--/, "");
		const value = argv[i + 1];
		if (value === undefined) throw new Error(`${argv[i]} needs a value`);
		args[key] = ["runs", "height", "width"].includes(key) ? Number(value) : value;
	}
	for (const need of ["agent", "mode", "file"]) {
		if (!args[need]) throw new Error(`--${need} is required`);
	}
	return args;
}

/** VmHWM / VmRSS of this process, in kB. */
function vm(key) {
	const status = fs.readFileSync("/proc/self/status", "utf8");
	const m = status.match(new RegExp(`^${key}:\\s+(\\d+) kB`, "m"));
	return m ? Number(m[1]) : null;
}

const noop = () => {};

/**
 * The agents' exported API behind one shape. Both expose SessionManager (open, getTree,
 * getLeafId, getBranch, buildSessionContext, branch, appendMessage, appendLabelChange,
 * branchWithSummary, createBranchedSession) and the /tree selector (TreeSelectorComponent,
 * which flattens and filters in its constructor; typed text goes through handleInput).
 */
async function loadAgent(name) {
	if (name === "pi") {
		const m = await import("@mariozechner/pi-coding-agent");
		m.initTheme();
		const pkg = JSON.parse(fs.readFileSync(path.resolve("node_modules/@mariozechner/pi-coding-agent/package.json"), "utf8"));
		return {
			version: `${pkg.name}@${pkg.version} (node ${process.version})`,
			open: async file => m.SessionManager.open(file),
			close: async () => {},
			// (tree, currentLeafId, terminalHeight, onSelect, onCancel, onLabelChange, initialSelectedId, initialFilterMode)
			selector: (tree, leaf, height, filter) =>
				new m.TreeSelectorComponent(tree, leaf, height, noop, noop, undefined, undefined, filter),
		};
	}
	if (name === "omp") {
		const { SessionManager } = await import("@oh-my-pi/pi-coding-agent/session/session-manager");
		const { TreeSelectorComponent } = await import("@oh-my-pi/pi-coding-agent/modes/components/tree-selector");
		const { initTheme } = await import("@oh-my-pi/pi-coding-agent/modes/theme/theme");
		await initTheme();
		const pkg = JSON.parse(fs.readFileSync(path.resolve("node_modules/@oh-my-pi/pi-coding-agent/package.json"), "utf8"));
		return {
			version: `${pkg.name}@${pkg.version} (bun ${globalThis.Bun?.version ?? "?"})`,
			open: file => SessionManager.open(file),
			close: sm => sm.close(),
			// (tree, currentLeafId, terminalHeight, onSelect, onCancel, onLabelChange, initialFilterMode)
			selector: (tree, leaf, height, filter) =>
				new TreeSelectorComponent(tree, leaf, height, noop, noop, undefined, filter),
		};
	}
	throw new Error(`unknown agent ${name}`);
}

/** Runs f `runs` times (awaiting it), returns the samples in ms. */
async function timeRuns(runs, f) {
	const samples = [];
	for (let i = 0; i < runs; i++) {
		const started = performance.now();
		await f(i);
		samples.push(performance.now() - started);
	}
	return samples;
}

/** Opening /tree: the tree, the selector (flatten + filter), the first rendered window. */
function firstWindow(agent, sm, args) {
	const tree = sm.getTree();
	const selector = agent.selector(tree, sm.getLeafId(), args.height, "default");
	const lines = selector.render(args.width);
	if (!Array.isArray(lines) || lines.length === 0) throw new Error("the tree selector rendered nothing");
	return lines.length;
}

async function modeOpen(agent, args) {
	const rssBeforeKb = vm("VmRSS");
	const started = performance.now();
	const sm = await agent.open(args.file);
	const openMs = performance.now() - started;
	const peakRssOpenKb = vm("VmHWM");
	const rssAfterOpenKb = vm("VmRSS");
	const entries = sm.getEntries().length;
	const t = performance.now();
	firstWindow(agent, sm, args);
	const firstWindowMs = performance.now() - t;
	return { openMs, firstWindowMs, peakRssOpenKb, peakRssKb: vm("VmHWM"), rssBeforeKb, rssAfterOpenKb, entries };
}

async function modeReads(agent, args) {
	const runs = args.runs;
	const many = Math.max(runs, 9);
	const sm = await agent.open(args.file);
	const leaf = sm.getLeafId();
	const out = { samples: {}, info: {} };
	const log = msg => process.stderr.write(`      ${args.agent}: ${msg}\n`);

	out.samples.getTree = await timeRuns(runs, () => sm.getTree().length);
	out.samples.getBranch = await timeRuns(many, () => sm.getBranch().length);
	const branch = sm.getBranch();
	out.info.branchLength = branch.length;
	out.samples.buildSessionContext = await timeRuns(runs, () => sm.buildSessionContext().messages.length);
	out.info.contextMessages = sm.buildSessionContext().messages.length;
	log("tree, branch, context measured");

	out.samples.firstWindow = await timeRuns(runs, () => firstWindow(agent, sm, args));
	for (const filter of FILTERS) {
		// Opening /tree in that filter: the whole flattened, filtered list is built.
		out.samples[`rows:${filter}`] = await timeRuns(runs, () =>
			agent.selector(sm.getTree(), leaf, args.height, filter),
		);
	}
	// Search: the query typed (pasted) into an open selector, then the window drawn again.
	const tree = sm.getTree();
	const search = [];
	for (let i = 0; i < runs; i++) {
		const selector = agent.selector(tree, leaf, args.height, "default");
		selector.render(args.width);
		const started = performance.now();
		selector.handleInput(SEARCH);
		selector.render(args.width);
		search.push(performance.now() - started);
		const query = selector.getTreeList().getSearchQuery();
		if (query !== SEARCH) throw new Error(`the selector did not take the query (has "${query}")`);
	}
	out.samples.search = search;
	log("rows, filters, search measured");

	// Navigate in memory: alternate between an entry off the active path and the leaf.
	const offPath = pickOffPath(sm, branch) ?? leaf;
	out.samples.navigate = await timeRuns(many, i => sm.branch(i % 2 === 0 ? offPath : leaf));
	sm.branch(leaf);
	await agent.close(sm);
	return out;
}

/** An entry off the active path, found like the harness does (from the end, every 7th). */
function pickOffPath(sm, branch) {
	const onPath = new Set(branch.map(e => e.id));
	const entries = sm.getEntries();
	for (let i = entries.length - 1; i >= 0; i -= 7) {
		const id = entries[i]?.id;
		if (id && !onPath.has(id)) return id;
	}
	return null;
}

async function modeWrites(agent, args) {
	const runs = args.runs;
	const many = Math.max(runs, 9);
	const out = { samples: {}, info: {} };
	const log = msg => process.stderr.write(`      ${args.agent}: ${msg}\n`);
	let sm = await agent.open(args.file);
	const leaf = sm.getLeafId();
	const offPath = pickOffPath(sm, sm.getBranch()) ?? leaf;
	out.samples.append = await timeRuns(many, () =>
		sm.appendMessage({ role: "user", content: "benchmark append", timestamp: 1_735_689_600_000 }),
	);
	out.samples.label = await timeRuns(many, i => sm.appendLabelChange(leaf, `bench-${i}`));
	out.samples.branchWithSummary = await timeRuns(many, i =>
		sm.branchWithSummary(i % 2 === 0 ? offPath : leaf, "Benchmark summary of the abandoned branch."),
	);
	await agent.close(sm);
	const grown = fs.statSync(args.file).size;
	out.info.appendedBytes = grown - Number(args.originalBytes ?? grown);
	log("append, label, branch_with_summary measured");

	const branched = [];
	for (let i = 0; i < runs; i++) {
		sm = await agent.open(args.file);
		const started = performance.now();
		const newFile = sm.createBranchedSession(leaf);
		branched.push(performance.now() - started);
		if (!newFile || !fs.existsSync(newFile)) throw new Error("createBranchedSession wrote no file");
		out.info.branchedBytes = fs.statSync(newFile).size;
		await agent.close(sm);
		fs.rmSync(newFile, { force: true });
	}
	out.samples.createBranchedSession = branched;
	log("createBranchedSession measured");
	return out;
}

async function main() {
	const args = parseArgs(process.argv.slice(2));
	const agent = await loadAgent(args.agent);
	let result;
	if (args.mode === "open") result = await modeOpen(agent, args);
	else if (args.mode === "reads") result = await modeReads(agent, args);
	else if (args.mode === "writes") result = await modeWrites(agent, args);
	else throw new Error(`unknown mode ${args.mode}`);
	result.version = agent.version;
	process.stdout.write(`${JSON.stringify(result)}\n`);
	// The agents may leave timers or watchers behind; the figures are out, so leave now.
	process.exit(0);
}

main().catch(err => {
	process.stderr.write(`probe (${process.argv.slice(2).join(" ")}): ${err?.stack ?? err}\n`);
	process.exit(1);
});
