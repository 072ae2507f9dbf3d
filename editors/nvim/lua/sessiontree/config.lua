---@brief
--- Options: the defaults, and `setup()` merging the user's table over them. `setup()` is optional;
--- every other module reads `require('sessiontree.config').options`.

---@alias sessiontree.FilterMode 'default'|'noTools'|'userOnly'|'labeledOnly'|'all'

---@class sessiontree.PanelOptions
---@field position 'left'|'right' Side of the editor the panel opens on.
---@field width integer Width of the panel in columns.
---@field truncate boolean Ask the server to cut rows to the panel width (as the agent does).
---@field follow_leaf boolean When the selection is the leaf and the agent appends, move it to the new leaf.
---@field close_on_select boolean Close the panel after a navigation (the agent closes /tree).

---@class sessiontree.ChatKeys
---@field send string|string[]|false In the input (normal mode): send to the agent.
---@field toggle string|string[]|false In the conversation: open or close the details under the cursor.
---@field stop string|string[]|false In both: stop the agent's answer.
---@field close string|string[]|false In both: close the chat.

---@class sessiontree.ChatOptions
---@field open_on_select boolean Open the chat when a selection puts text back into the input.
---@field input_height integer Height of the input window under the conversation.
---@field keys sessiontree.ChatKeys

---@class sessiontree.AgentOptions
---@field disabled boolean Turn the live agent off: <CR> in the chat appends without an answer.
---@field pi_path string|nil The `pi` executable (default: `pi` on PATH).
---@field omp_path string|nil The `omp` executable (default: `omp` on PATH).
---@field pi_args string[] Arguments given to `pi` before the server's own.
---@field omp_args string[] Arguments given to `omp` before the server's own.
---@field idle_seconds integer|nil Stop an agent the server started after this many idle seconds (server: 600; 0 = never).
---@field own_summaries boolean Write branch summaries with the server's own providers even when the agent could.

---@class sessiontree.Keys
---@field down string|string[]
---@field up string|string[]
---@field page_up string|string[]
---@field page_down string|string[]
---@field fold_or_up string|string[]
---@field unfold_or_down string|string[]
---@field fold string|string[]
---@field unfold string|string[]
---@field toggle_fold string|string[]
---@field unfold_all string|string[]
---@field select string|string[]
---@field search string|string[]
---@field search_backspace string|string[]
---@field escape string|string[]
---@field label string|string[]
---@field filter_next string|string[]
---@field filter_prev string|string[]
---@field filter_default string|string[]
---@field filter_no_tools string|string[]
---@field filter_user_only string|string[]
---@field filter_labeled_only string|string[]
---@field filter_all string|string[]
---@field branch string|string[]
---@field chat string|string[]
---@field preview string|string[]
---@field cancel string|string[]
---@field close string|string[]

---@class sessiontree.Store
---@field url string `redis://HOST:PORT[/DB][?prefix=PREFIX]` (`rediss://` for TLS), without credentials.
---@field user string|nil The ACL user.
---@field password_env string|nil The environment variable holding the password.
---@field password string|nil The password itself (prefer password_env).
---@field list_all boolean|nil List every session of the store, not only this workspace's.
---@field ca_file string|nil For `rediss://` with a private CA: that CA's certificate (PEM file).

---@class sessiontree.Options
---@field cmd string[]|nil The server command; nil = `sessiontree lsp` from PATH, else the repository's target/.
---@field extra_roots string[] More folders holding session files.
---@field omp_agent_dir string|nil Override omp's agent folder (default `$PI_CODING_AGENT_DIR` or `~/.omp/agent`).
---@field pi_agent_dir string|nil Override pi's agent folder (default `~/.pi/agent`).
---@field live_writer_seconds integer|nil "Live writer" = modified within this many seconds.
---@field stores sessiontree.Store[] Session stores (omp's Redis storage) listed and opened besides files.
---@field summaries boolean|'auto' Ask "Summarize branch?" on navigation; 'auto' = when the server says so.
---@field rewind { on_navigate: 'ask'|'keep'|'restore' } After a navigation to an entry with a rewind point whose files differ: ask, keep the files, or restore them.
---@field init_options table More `initializationOptions` for the server (merged over the ones above).
---@field settings table Server settings (answers `workspace/configuration`, e.g. summary providers).
---@field filters sessiontree.FilterMode[] The order `<C-o>` cycles through.
---@field panel sessiontree.PanelOptions
---@field chat sessiontree.ChatOptions
---@field agent sessiontree.AgentOptions The live agent (passed to the server when it starts).
---@field keys sessiontree.Keys Panel keys; set a key to `false` to unmap it.

local M = {}

--- The agents' filter modes, in their cycle order (`default → no-tools → user-only → labeled-only → all`).
M.FILTERS = { 'default', 'noTools', 'userOnly', 'labeledOnly', 'all' }

--- Short names shown in the header, and accepted by `:SessionFilter` besides the wire names.
M.FILTER_ALIASES = {
  default = 'default',
  ['no-tools'] = 'noTools',
  notools = 'noTools',
  user = 'userOnly',
  ['user-only'] = 'userOnly',
  labeled = 'labeledOnly',
  ['labeled-only'] = 'labeledOnly',
  all = 'all',
}

---@type sessiontree.Options
M.defaults = {
  cmd = nil,
  extra_roots = {},
  stores = {},
  omp_agent_dir = nil,
  pi_agent_dir = nil,
  live_writer_seconds = nil,
  summaries = 'auto',
  rewind = {
    on_navigate = 'ask',
  },
  init_options = {},
  settings = {},
  filters = vim.deepcopy(M.FILTERS),
  panel = {
    position = 'left',
    width = 60,
    truncate = true,
    follow_leaf = true,
    close_on_select = false,
    -- Rows fetched around the cursor (a window, as VS Code asks; the panel asks for the next one
    -- as the cursor nears an edge): a filter change or a search on a 100k session answers with
    -- these, not with every row. 0 = every row.
    max_rows = 1000,
  },
  chat = {
    open_on_select = true,
    input_height = 6,
    keys = {
      send = '<CR>',
      toggle = '<CR>',
      stop = '<C-c>',
      close = 'q',
    },
  },
  agent = {
    disabled = false,
    pi_path = nil,
    omp_path = nil,
    pi_args = {},
    omp_args = {},
    idle_seconds = nil,
    own_summaries = false,
  },
  keys = {
    down = { 'j', '<Down>' },
    up = { 'k', '<Up>' },
    page_up = '<Left>',
    page_down = '<Right>',
    -- pi's /tree fold keys (Ctrl+← / Alt+←, Ctrl+→ / Alt+→): fold or move up a branch segment,
    -- unfold or move down one; omp sessions fold the same way.
    fold_or_up = { 'h', '<C-Left>', '<M-Left>' },
    unfold_or_down = { 'l', '<C-Right>', '<M-Right>' },
    fold = 'zc',
    unfold = 'zo',
    toggle_fold = 'za',
    unfold_all = 'zR',
    select = '<CR>',
    search = '/',
    search_backspace = '<BS>',
    escape = '<Esc>',
    label = 'L',
    filter_next = '<C-o>',
    -- The agent's key is Shift+Ctrl+O, which most terminals send as plain <C-o>: <M-o> can be
    -- typed anywhere, and <C-S-o> works where the terminal tells them apart (kitty's protocol).
    filter_prev = { '<M-o>', '<C-S-o>' },
    filter_default = '<M-d>',
    filter_no_tools = '<M-t>',
    filter_user_only = '<M-u>',
    filter_labeled_only = '<M-l>',
    filter_all = '<M-a>',
    branch = 'b',
    chat = 'c',
    preview = 'K',
    cancel = '<C-c>',
    close = 'q',
  },
}

---@type sessiontree.Options
M.options = vim.deepcopy(M.defaults)

--- Merges `opts` over the defaults. Lists (keys, filters, extra_roots, stores, cmd, agent args) replace, not merge.
---@param opts sessiontree.Options|table|nil
function M.setup(opts)
  opts = opts or {}
  if type(opts) ~= 'table' then
    error('sessiontree.setup() takes a table of options, got ' .. type(opts))
  end
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  -- tbl_deep_extend merges lists index by index; a user list must replace ours whole.
  for _, key in ipairs({ 'cmd', 'extra_roots', 'filters', 'stores' }) do
    if opts[key] ~= nil then
      M.options[key] = opts[key]
    end
  end
  for name, lhs in pairs(opts.keys or {}) do
    M.options.keys[name] = lhs
  end
  for name, lhs in pairs(type(opts.chat) == 'table' and opts.chat.keys or {}) do
    M.options.chat.keys[name] = lhs
  end
  local agent = type(opts.agent) == 'table' and opts.agent or {}
  for _, key in ipairs({ 'pi_args', 'omp_args' }) do
    if agent[key] ~= nil then
      M.options.agent[key] = agent[key]
    end
  end
end

--- The wire name of a filter given by wire name or alias; nil when unknown.
---@param name string
---@return sessiontree.FilterMode|nil
function M.filter_mode(name)
  if vim.tbl_contains(M.FILTERS, name) then
    return name
  end
  return M.FILTER_ALIASES[name:lower()]
end

return M
