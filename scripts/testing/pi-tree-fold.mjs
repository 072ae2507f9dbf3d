// The real pi's `/tree` folding (its TreeSelectorComponent as installed from npm, driven by its own
// keys): what the list shows after Ctrl+← folds a branch. For the engine's test that its folded
// views are pi's, line for line.
//
//   HOME=<home> node scripts/testing/pi-tree-fold.mjs < cases.json
//
// cases.json: {"files": ["<session file>", …], "filters": ["default", …], "width": 120,
// "height": 40, "picks": 12}. For each file and filter, with the selector opened on the leaf:
//   - "leaf": Ctrl+← pressed from the leaf until something folds (pi moves up to the start of the
//     branch segment, then folds it): the leaf ends inside the folded branch;
//   - "pick": a foldable row (up to `picks` of them, spread over the list) selected and folded,
//     then a second foldable row below it folded too ("pick2");
//   - "up" / "down": Ctrl+← / Ctrl+→ on rows spread over the list where they do not fold: pi
//     moves the selection by branch segments.
// Prints [{"file", "filter", "kind", "select" (the id the selector was put on; null: the leaf),
// "folded" (pi's folded ids, in order), "selected" (the selected id after), "lines" (the list as
// rendered, ANSI removed)}, …], with "kind": "open" first for each file and filter (nothing
// folded).
// AGENTS_DIR names the folder holding the agents' node_modules (default: .tools/agents).
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const modules = path.join(process.env.AGENTS_DIR ?? path.join(root, ".tools/agents"), "node_modules");
const load = (relative) => import(pathToFileURL(path.join(modules, relative)).href);
const pi = await load("@mariozechner/pi-coding-agent/dist/index.js");
const { KeybindingsManager } = await load("@mariozechner/pi-coding-agent/dist/core/keybindings.js");
const { setKeybindings } = await load("@mariozechner/pi-tui/dist/index.js");

let input = "";
for await (const chunk of process.stdin) input += chunk;
const { files, filters, width, height, picks } = JSON.parse(input);

pi.initTheme();
// pi's own key bindings, as its interactive mode installs them (the defaults: HOME has none).
setKeybindings(KeybindingsManager.create(path.join(process.env.HOME ?? root, ".pi/agent")));
const CTRL_LEFT = "\x1b[1;5D";
const CTRL_RIGHT = "\x1b[1;5C";
const strip = (line) => line.replace(/\x1b\[[0-9;]*m/g, "");
const noop = () => {};

const out = [];
for (const file of files) {
	const sm = pi.SessionManager.open(file);
	const tree = sm.getTree();
	const leaf = sm.getLeafId();
	for (const filter of filters) {
		const open = () => {
			const selector = new pi.TreeSelectorComponent(tree, leaf, height, noop, noop, undefined, undefined, filter);
			return selector.getTreeList();
		};
		const record = (list, kind, select) => {
			const node = list.filteredNodes[list.selectedIndex];
			out.push({
				file,
				filter,
				kind,
				select,
				folded: [...list.foldedNodes],
				selected: node ? node.node.entry.id : null,
				lines: list.render(width).map(strip),
			});
		};
		const selectRow = (list, i) => {
			list.selectedIndex = i;
			list.lastSelectedId = list.filteredNodes[i].node.entry.id;
		};
		record(open(), "open", null);

		const walk = open();
		for (let n = 0; n < 64 && walk.foldedNodes.size === 0; n++) walk.handleInput(CTRL_LEFT);
		if (walk.foldedNodes.size > 0) record(walk, "leaf", null);

		// The keys on rows they do not fold or unfold: pi moves by branch segments.
		const rows = open().filteredNodes.length;
		const every = Math.max(1, Math.floor(rows / picks));
		for (let i = 0; i < rows; i += every) {
			for (const [key, kind] of [[CTRL_LEFT, "up"], [CTRL_RIGHT, "down"]]) {
				const list = open();
				selectRow(list, i);
				const id = list.filteredNodes[i].node.entry.id;
				// A selection is named by its id: rows of id-less entries cannot be asked for.
				if (typeof id !== "string") continue;
				list.handleInput(key);
				if (list.foldedNodes.size === 0) record(list, kind, id);
			}
		}

		const listed = open();
		const foldable = listed.filteredNodes
			.map((f, i) => [i, f.node.entry.id])
			.filter(([, id]) => listed.isFoldable(id));
		const step = Math.max(1, Math.floor(foldable.length / picks));
		for (let p = 0; p < foldable.length; p += step) {
			const [i, id] = foldable[p];
			const list = open();
			selectRow(list, i);
			list.handleInput(CTRL_LEFT);
			record(list, "pick", id);
			const next = list.filteredNodes.findIndex(
				(f, j) => j > list.selectedIndex && list.isFoldable(f.node.entry.id),
			);
			if (next >= 0) {
				const second = list.filteredNodes[next].node.entry.id;
				selectRow(list, next);
				list.handleInput(CTRL_LEFT);
				record(list, "pick2", second);
			}
		}
	}
}
process.stdout.write(JSON.stringify(out));
