-- Config for `vim.lsp.config` / `vim.lsp.enable` (Neovim 0.11+): with this folder on 'runtimepath',
-- `vim.lsp.enable('sessiontree')` starts the server on session files (filetype `jsonl`/`json`) and
-- gives them outline, hover, code lenses, code actions and diagnostics. The panel reuses the client.
local ok, client = pcall(require, 'sessiontree.client')
local cmd = { 'sessiontree', 'lsp' }
if ok then
  cmd = client.resolve_cmd() or cmd
end

---@type vim.lsp.Config
return {
  cmd = cmd,
  filetypes = { 'jsonl' },
  root_markers = { '.git' },
  init_options = ok and client.init_options() or {},
  settings = ok and require('sessiontree.config').options.settings or {},
  capabilities = ok and client.capabilities() or nil,
  handlers = ok and client.handlers or nil,
}
