// The real agents' branch summarizer (`generateBranchSummary`, as installed from npm), answered by
// a scripted model: what each agent stores for given abandoned entries and model text. For the
// engine's test that its stored summaries are the agents', byte for byte.
//
//   node scripts/testing/branch-summary.mjs pi  < cases.json     (pi on Node)
//   bun  scripts/testing/branch-summary.mjs omp < cases.json     (omp on Bun)
//
// cases.json: [{"entries": [<session entries, oldest first>], "text": "<the model's answer>"}, …]
// Prints [{"summary", "readFiles", "modifiedFiles"}, …] (JSON), one per case.
// AGENTS_DIR names the folder holding the agents' node_modules (default: .tools/agents).
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const modules = path.join(process.env.AGENTS_DIR ?? path.join(root, ".tools/agents"), "node_modules");
const load = (relative) => import(pathToFileURL(path.join(modules, relative)).href);

const agent = process.argv[2];
let input = "";
for await (const chunk of process.stdin) input += chunk;
const cases = JSON.parse(input);
const signal = new AbortController().signal;

/** pi 0.73.1: its summarizer with pi-ai's scripted ("faux") model. */
async function pi() {
	const { registerFauxProvider, fauxAssistantMessage } = await load("@mariozechner/pi-ai/dist/index.js");
	const { generateBranchSummary } = await load(
		"@mariozechner/pi-coding-agent/dist/core/compaction/branch-summarization.js",
	);
	const out = [];
	for (const { entries, text } of cases) {
		const faux = registerFauxProvider();
		faux.setResponses([fauxAssistantMessage(text)]);
		out.push(await generateBranchSummary(entries, { model: faux.getModel(), apiKey: "test", signal }));
		faux.unregister();
	}
	return out;
}

/** omp 18.2.3: its summarizer (pi-agent-core) with the completion it lets a host supply. */
async function omp() {
	const { generateBranchSummary } = await load("@oh-my-pi/pi-agent-core/src/compaction/branch-summarization.ts");
	const model = {
		id: "test-model",
		name: "test-model",
		api: "openai-completions",
		provider: "test",
		baseUrl: "http://127.0.0.1:9/v1",
		reasoning: false,
		input: ["text"],
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
		contextWindow: 128000,
		maxTokens: 4096,
	};
	const out = [];
	for (const { entries, text } of cases) {
		const completeImpl = async () => ({
			role: "assistant",
			content: [{ type: "text", text }],
			api: model.api,
			provider: model.provider,
			model: model.id,
			usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
			stopReason: "stop",
			timestamp: Date.now(),
		});
		out.push(await generateBranchSummary(entries, { model, apiKey: "test", signal, completeImpl }));
	}
	return out;
}

const results = agent === "pi" ? await pi() : agent === "omp" ? await omp() : null;
if (!results) {
	console.error("usage: branch-summary.mjs pi|omp < cases.json");
	process.exit(2);
}
process.stdout.write(JSON.stringify(results));
