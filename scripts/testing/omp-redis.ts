// The real omp (its SessionManager with RedisSessionStorage, as installed from npm) reading and
// writing sessions in a Redis server, for the tests of sessions kept in Redis. Run under Bun:
//
//   bun scripts/testing/omp-redis.ts <command> <redis-url> <prefix> ...
//
//   put <path> <file>          omp's storage writes <file>'s bytes as session <path> (a full write)
//   read <path>                prints the session's text as omp's storage reads it (title laid over)
//   reload <path>              SessionManager.open(<path>): prints what omp sees (JSON)
//   write <scenario.json> <sessionDir> <cwd>
//                              replays a conformance scenario's ops through SessionManager.create
//                              and prints {sessionFile, branchedFile, refs} (JSON)
//   append <path> <count>      opens <path> and appends <count> user messages, one at a time
//   list <dir>                 prints the session paths the storage lists in <dir> (JSON)
//   batch <json>               runs a JSON array of [command, ...args] in this one process and
//                              prints a JSON array of what each printed
//
// OMP_PACKAGE_DIR names the installed @oh-my-pi/pi-coding-agent (default: .tools/agents).
import { RedisClient } from "bun";
import * as path from "node:path";

const root = path.resolve(import.meta.dir, "../..");
const ompDir =
	process.env.OMP_PACKAGE_DIR ?? path.join(root, ".tools/agents/node_modules/@oh-my-pi/pi-coding-agent");
const { RedisSessionStorage } = await import(path.join(ompDir, "src/session/redis-session-storage.ts"));
const { SessionManager } = await import(path.join(ompDir, "src/session/session-manager.ts"));

const [command, url, prefix, ...args] = process.argv.slice(2);
if (!command || !url || prefix === undefined) {
	console.error("usage: omp-redis.ts <command> <redis-url> <prefix> ...");
	process.exit(2);
}

const client = new RedisClient(url);
await client.connect();
const storage = await RedisSessionStorage.create({ client, prefix });

function snapshot(manager: any) {
	const entries = manager.getEntries();
	const labels: Record<string, string> = {};
	for (const entry of entries) {
		const label = manager.getLabel(entry.id);
		if (label !== undefined) labels[entry.id] = label;
	}
	return {
		sessionFile: manager.getSessionFile(),
		header: manager.getHeader(),
		sessionName: manager.getSessionName() ?? null,
		leafId: manager.getLeafId(),
		entryIds: entries.map((e: any) => e.id ?? null),
		entryTypes: entries.map((e: any) => e.type),
		branch: manager.getBranch().map((e: any) => e.id),
		labels,
	};
}

let clock = Date.parse("2025-01-01T00:00:00.000Z");
function assistant(op: any) {
	const content: any[] = [];
	if (op.thinking) content.push({ type: "thinking", thinking: op.thinking });
	if (op.text) content.push({ type: "text", text: op.text });
	for (const call of op.toolCalls ?? []) {
		content.push({ type: "toolCall", id: call.id, name: call.name ?? "read", arguments: call.args ?? call.arguments ?? {} });
	}
	return {
		role: "assistant",
		content,
		api: "fake-api",
		provider: op.provider ?? "anthropic",
		model: op.model ?? "claude-test",
		usage: {
			input: 1,
			output: 1,
			cacheRead: 0,
			cacheWrite: 0,
			totalTokens: 2,
			cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
		},
		stopReason: op.stopReason ?? "stop",
		timestamp: clock,
	};
}

async function settle() {
	await storage.drain();
	await Bun.sleep(1);
}

async function write(scenarioFile: string, sessionDir: string, cwd: string) {
	const scenario = await Bun.file(scenarioFile).json();
	const manager = SessionManager.create(cwd, sessionDir, storage);
	const refs: Record<string, string> = {};
	const ref = (name: string) => (name.startsWith("=") ? name.slice(1) : refs[name]);
	let branchedFile: string | undefined;
	for (const op of scenario.ops) {
		clock += op.op === "tick" ? (op.ms ?? 0) : (scenario.tickMs ?? 1000);
		let id: string | undefined;
		switch (op.op) {
			case "tick":
				break;
			case "user":
				id = manager.appendMessage({ role: "user", content: op.text ?? "", timestamp: clock });
				break;
			case "assistant":
				id = manager.appendMessage(assistant(op));
				break;
			case "toolResult":
				id = manager.appendMessage({
					role: "toolResult",
					toolCallId: op.toolCallId,
					toolName: op.toolName ?? "read",
					content: [{ type: "text", text: op.text ?? "" }],
					isError: op.isError ?? false,
					timestamp: clock,
				});
				break;
			case "label":
				id = manager.appendLabelChange(ref(op.target), op.label ?? undefined);
				break;
			case "branch":
				manager.branch(ref(op.target));
				break;
			case "resetLeaf":
				manager.resetLeaf();
				break;
			case "branchWithSummary":
				id = manager.branchWithSummary(op.target ? ref(op.target) : null, op.summary ?? "");
				break;
			case "name":
				await manager.setSessionName(op.name, op.source ?? "user");
				id = manager.getEntries().at(-1)?.id;
				break;
			case "thinking":
				id = manager.appendThinkingLevelChange(op.level);
				break;
			case "createBranchedSession":
				branchedFile = manager.createBranchedSession(ref(op.target));
				break;
			default:
				throw new Error(`op ${op.op} is not replayed by this script`);
		}
		if (op.ref && id) refs[op.ref] = id;
		// As between an agent's turns: omp's Redis writes are published asynchronously, and the
		// manager takes the next write's expected size from the confirmed ones.
		await settle();
	}
	await manager.flush();
	await manager.close();
	await storage.drain();
	return { sessionFile: manager.getSessionFile(), branchedFile: branchedFile ?? null, refs };
}

/** Runs one command; returns what it prints. */
async function run(command: string, args: string[]): Promise<string> {
	switch (command) {
		case "put": {
			const [file, source] = args;
			await storage.writeText(file, await Bun.file(source).text());
			return "";
		}
		case "read":
			return await storage.readText(args[0]);
		case "reload": {
			const manager = await SessionManager.open(args[0], undefined, storage);
			const text = JSON.stringify(snapshot(manager));
			await manager.close();
			return text;
		}
		case "write":
			return JSON.stringify(await write(args[0], args[1], args[2]));
		case "append": {
			const manager = await SessionManager.open(args[0], undefined, storage);
			const ids: string[] = [];
			for (let i = 0; i < Number(args[1]); i++) {
				ids.push(manager.appendMessage({ role: "user", content: `omp line ${i}`, timestamp: Date.now() }));
				await settle();
			}
			await manager.close();
			await storage.drain();
			return JSON.stringify(ids);
		}
		case "list":
			return JSON.stringify(storage.listFilesSync(args[0], "*.jsonl"));
		case "batch": {
			// Many commands in one process (Bun and omp start once): a JSON array of
			// [command, ...args]; prints a JSON array of what each printed.
			const out: string[] = [];
			for (const [sub, ...subArgs] of JSON.parse(args[0]) as string[][]) out.push(await run(sub, subArgs));
			return JSON.stringify(out);
		}
		default:
			throw new Error(`unknown command ${command}`);
	}
}

try {
	process.stdout.write(await run(command, args));
} finally {
	await storage.drain().catch(() => {});
	client.close();
}
