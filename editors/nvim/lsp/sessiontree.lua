-- Config for `vim.lsp.config` / `vim.lsp.enable` (Neovim 0.11+): with this folder on 'runtimepath',
-- `vim.lsp.enable('sessiontree')` starts the server on session files and gives them outline,
-- hover, code lenses, code actions and diagnostics. The panel reuses the client.
--
-- Only session files: a `*.jsonl` under the agents' session folders (or `extra_roots`), or one
-- whose first line is a session header; any other `*.jsonl` (a project's `data.jsonl`) is left
-- alone. When the server binary cannot be found the user is told once, with where to look
-- (`:checkhealth sessiontree`), instead of a failed start that only `lsp.log` records.
local ok, client = pcall(require, 'sessiontree.client')

--- The server command, or why there is none (no binary found, or one that cannot run).
---@type string[]|nil, string|nil
local cmd, missing = { 'sessiontree', 'lsp' }, nil
if ok then
  local found, where = client.resolve_cmd()
  if not found then
    missing = where
  elseif vim.fn.executable(found[1]) == 0 then
    cmd, missing = found, '`' .. found[1] .. '` is not executable (from ' .. where .. ')'
  else
    cmd = found
  end
end

local told = false

---@param bufnr integer
---@param on_dir fun(root_dir?: string)
local function root_dir(bufnr, on_dir)
  local files_ok, files = pcall(require, 'sessiontree.files')
  if files_ok and not files.is_session_file(vim.api.nvim_buf_get_name(bufnr)) then
    return
  end
  -- Still our command (a user's vim.lsp.config('sessiontree', { cmd = … }) replaces it)?
  if missing and type((vim.lsp.config.sessiontree or {}).cmd) == 'function' then
    if not told then
      told = true
      vim.notify(
        'sessiontree: the server was not found: '
          .. missing
          .. '; session files get no outline or diagnostics. See :checkhealth sessiontree',
        vim.log.levels.WARN
      )
    end
    return
  end
  on_dir(vim.fs.root(bufnr, { '.git' }) or vim.fn.getcwd())
end

---@type vim.lsp.Config
return {
  -- Without a binary, a function: Neovim then asks root_dir (which says so) instead of skipping
  -- the file silently; it is never called, since root_dir does not start a client then.
  cmd = missing and function()
    error('sessiontree: the server was not found: ' .. missing)
  end or cmd,
  filetypes = { 'jsonl' },
  root_dir = root_dir,
  init_options = ok and client.init_options() or {},
  settings = ok and require('sessiontree.config').options.settings or {},
  capabilities = ok and client.capabilities() or nil,
  handlers = ok and client.handlers or nil,
}
