---@brief
--- The connection to the language server: finding the binary, starting (or reusing) the client,
--- requests and notifications, and the handlers for what the server sends (`didChange`,
--- `didNavigate`, `didBranch`, the hooks). Other modules subscribe with `on()`; this module knows
--- nothing about panels or buffers.

local config = require('sessiontree.config')
local protocol = require('sessiontree.protocol')

local M = {}

M.NAME = 'sessiontree'

---@type table<string, fun(params: table)[]>
local listeners = {}

--- Subscribes to a server notification (`protocol.DID_CHANGE`, …).
---@param method string
---@param fn fun(params: table)
function M.on(method, fn)
  listeners[method] = listeners[method] or {}
  table.insert(listeners[method], fn)
end

---@param method string
---@param params table
local function emit(method, params)
  for _, fn in ipairs(listeners[method] or {}) do
    local ok, err = pcall(fn, params)
    if not ok then
      vim.notify('sessiontree: ' .. method .. ' listener failed: ' .. tostring(err), vim.log.levels.ERROR)
    end
  end
end

--- The handlers for every server → client message; also used by `lsp/sessiontree.lua`, so a client
--- started by `vim.lsp.enable('sessiontree')` behaves the same.
---@type table<string, lsp.Handler>
M.handlers = {
  [protocol.DID_CHANGE] = function(_, params)
    emit(protocol.DID_CHANGE, params)
  end,
  [protocol.DID_NAVIGATE] = function(_, params)
    emit(protocol.DID_NAVIGATE, params)
  end,
  [protocol.DID_BRANCH] = function(_, params)
    emit(protocol.DID_BRANCH, params)
  end,
  [protocol.DID_RECORD_REWIND_POINT] = function(_, params)
    emit(protocol.DID_RECORD_REWIND_POINT, params)
  end,
  [protocol.AGENT_EVENT] = function(_, params)
    emit(protocol.AGENT_EVENT, params)
  end,
  -- The agent's dialogs: declared in the capabilities, answered with vim.ui.
  [protocol.AGENT_DIALOG] = function(_, params)
    return require('sessiontree.dialogs').answer(params)
  end,
  -- We declare no hooks, so these should never come; answer "go ahead" if a server sends them.
  [protocol.BEFORE_TREE] = function()
    return { cancel = false }
  end,
  [protocol.BEFORE_BRANCH] = function()
    return { cancel = false }
  end,
}

--- The repository root when the plugin runs from a sessiontree checkout (editors/nvim/lua/sessiontree/).
---@return string|nil
local function repo_root()
  local source = debug.getinfo(1, 'S').source:gsub('^@', '')
  local root = vim.fn.fnamemodify(source, ':p:h:h:h:h:h')
  if vim.fn.filereadable(root .. '/Cargo.toml') == 1 then
    return root
  end
  return nil
end

--- The server command: `cmd` from setup, else `sessiontree` on PATH, else the newer of the
--- checkout's target/release and target/debug binaries.
---@return string[]|nil cmd
---@return string where how it was found, or why nothing was
function M.resolve_cmd()
  local cmd = config.options.cmd
  if cmd and #cmd > 0 then
    return cmd, 'setup({ cmd })'
  end
  local exe = vim.fn.exepath('sessiontree')
  if exe ~= '' then
    return { exe, 'lsp' }, 'PATH'
  end
  local root = repo_root()
  if root then
    -- The newer build wins: a developer rebuilding debug should not get a stale release binary.
    local best, best_time, best_profile = nil, -1, nil
    for _, profile in ipairs({ 'release', 'debug' }) do
      local bin = root .. '/target/' .. profile .. '/sessiontree'
      if vim.fn.executable(bin) == 1 then
        local time = vim.fn.getftime(bin)
        if time > best_time then
          best, best_time, best_profile = bin, time, profile
        end
      end
    end
    if best then
      return { best, 'lsp' }, 'target/' .. best_profile
    end
  end
  return nil, 'no `sessiontree` on PATH and no target/{release,debug}/sessiontree; set cmd in setup()'
end

--- The live agent's settings from `setup({ agent = … })` (camelCase, as protocol-ext's AgentSettings).
---@return table
function M.agent_settings()
  local a = config.options.agent or {}
  local function str(v)
    return type(v) == 'string' and vim.trim(v) ~= '' and vim.trim(v) or nil
  end
  local function list(v)
    return type(v) == 'table' and #v > 0 and v or nil
  end
  return {
    disabled = a.disabled == true or nil,
    piPath = str(a.pi_path),
    ompPath = str(a.omp_path),
    piArgs = list(a.pi_args),
    ompArgs = list(a.omp_args),
    idleSeconds = type(a.idle_seconds) == 'number' and a.idle_seconds or nil,
    ownSummaries = a.own_summaries == true or nil,
  }
end

--- `initializationOptions.stores` from the `stores` option (camelCase keys).
---@param stores sessiontree.Store[]|nil
---@return table[]|nil
local function stores_option(stores)
  if not stores or #stores == 0 then
    return nil
  end
  local out = {}
  for _, s in ipairs(stores) do
    table.insert(out, {
      url = s.url,
      user = s.user,
      passwordEnv = s.password_env,
      password = s.password,
      listAll = s.list_all or false,
      caFile = s.ca_file,
    })
  end
  return out
end

--- The `initializationOptions` from the options (camelCase, as protocol-ext's InitializationOptions).
---@return table
function M.init_options()
  local o = config.options
  return vim.tbl_deep_extend('force', {
    extraRoots = o.extra_roots or {},
    ompAgentDir = o.omp_agent_dir,
    piAgentDir = o.pi_agent_dir,
    liveWriterSeconds = o.live_writer_seconds,
    agent = M.agent_settings(),
    stores = stores_option(o.stores),
  }, o.init_options or {})
end

--- Client capabilities: the standard ones plus `experimental.sessionTree` (no hooks; the agent's
--- dialogs are shown).
---@return table
function M.capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.experimental = caps.experimental or {}
  caps.experimental.sessionTree = { hooks = false, agentDialogs = true }
  return caps
end

--- The config table for `vim.lsp.start` / `vim.lsp.config`.
---@param root string|nil
---@return table|nil
---@return string|nil err
function M.lsp_config(root)
  local cmd, why = M.resolve_cmd()
  if not cmd then
    return nil, why
  end
  root = root or vim.fn.getcwd()
  return {
    name = M.NAME,
    cmd = cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = M.init_options(),
    settings = config.options.settings or {},
    capabilities = M.capabilities(),
    handlers = M.handlers,
  }
end

---@type integer|nil
local client_id = nil

--- The running client, if any (ours, or one started by `vim.lsp.enable('sessiontree')`).
---@return vim.lsp.Client|nil
function M.get()
  if client_id then
    local c = vim.lsp.get_client_by_id(client_id)
    if c and not (c.is_stopped and c:is_stopped()) then
      return c
    end
    client_id = nil
  end
  for _, c in ipairs(vim.lsp.get_clients({ name = M.NAME })) do
    client_id = c.id
    return c
  end
  return nil
end

--- The running client, starting one for the current working directory when needed.
---@return vim.lsp.Client|nil
---@return string|nil err
function M.ensure()
  local c = M.get()
  if c then
    return c
  end
  local cfg, err = M.lsp_config()
  if not cfg then
    return nil, err
  end
  local id
  if vim.fn.has('nvim-0.11') == 1 then
    id = vim.lsp.start(cfg, { attach = false })
  else
    -- 0.10: vim.lsp.start always attaches to a buffer; start_client does not.
    id = vim.lsp.start_client(cfg) ---@diagnostic disable-line: deprecated
  end
  if not id then
    return nil, 'could not start the server: ' .. table.concat(cfg.cmd, ' ')
  end
  client_id = id
  return vim.lsp.get_client_by_id(id)
end

--- Handlers of requests in flight, by request id: `{ handler, cancelled }`.
---@type table<integer, { handler: fun(err: table|nil, result: any), cancelled: boolean }>
local inflight = {}

--- Neovim's RPC layer drops a `RequestCancelled` (-32800) answer without calling the request's handler (it only
--- fires `LspRequest` with type 'complete'), so a cancelled request would never settle. When the answer to a request
--- we cancelled arrives and its handler was not called with it, the handler gets the -32800 error itself.
local function watch_replies()
  if inflight._watching then
    return
  end
  inflight._watching = true
  vim.api.nvim_create_autocmd('LspRequest', {
    group = vim.api.nvim_create_augroup('sessiontree.client.requests', { clear = true }),
    callback = function(ev)
      local data = ev.data or {}
      local entry = data.request_id and inflight[data.request_id]
      if data.client_id ~= client_id or not entry or not entry.cancelled then
        return
      end
      if data.request and data.request.type == 'complete' then
        -- An answer with a result or another error calls the handler right after this autocmd.
        vim.schedule(function()
          if inflight[data.request_id] == entry then
            inflight[data.request_id] = nil
            entry.handler({ code = -32800, message = 'Request cancelled' }, nil)
          end
        end)
      end
    end,
  })
end

---@param c vim.lsp.Client
---@param method string
---@param params table
---@param handler fun(err: table|nil, result: any)
---@return integer|nil request id
local function raw_request(c, method, params, handler)
  watch_replies()
  local id
  local entry = { handler = handler, cancelled = false }
  local wrapped = function(err, result)
    if id and inflight[id] == entry then
      inflight[id] = nil
    end
    handler(err, result)
  end
  local ok
  if vim.fn.has('nvim-0.11') == 1 then
    ok, id = c:request(method, params, wrapped, 0)
  else
    ok, id = c.request(method, params, wrapped, 0) ---@diagnostic disable-line
  end
  if not ok then
    vim.schedule(function()
      handler({ code = -32603, message = 'the server is not running' }, nil)
    end)
    return nil
  end
  inflight[id] = entry
  return id
end

--- Sends waiting for `initialize` (the server refuses requests before that), in the order they
--- were made: one queue and one timer, so a request made later never overtakes an earlier one.
---@type { c: vim.lsp.Client, send: fun(ready: boolean) }[]
local starting = {}
local starting_timer = nil

--- Runs `fn` once the client finished `initialize`, after every earlier waiting request.
---@param c vim.lsp.Client
---@param fn fun(ready: boolean)
local function when_ready(c, fn)
  if c.initialized and #starting == 0 then
    return fn(true)
  end
  table.insert(starting, { c = c, send = fn })
  if starting_timer then
    return
  end
  local timer = assert(vim.uv.new_timer())
  starting_timer = timer
  local waited = 0
  timer:start(
    10,
    10,
    vim.schedule_wrap(function()
      waited = waited + 10
      local head = starting[1]
      local stopped = head and head.c.is_stopped and head.c:is_stopped()
      if head and not head.c.initialized and not stopped and waited <= 20000 then
        return
      end
      if not timer:is_closing() then
        timer:stop()
        timer:close()
      end
      starting_timer = nil
      local queue = starting
      starting = {}
      for _, w in ipairs(queue) do
        w.send(w.c.initialized == true)
      end
    end)
  )
end

--- Sessions whose `open` is in flight (by file path): requests for them wait for its answer, in
--- order, since the server refuses requests for a session it has not opened yet (a resize or a
--- filter key right after `:SessionTree` would otherwise fail with `sessionNotFound`).
---@type table<string, { opens: integer, waiting: fun()[] }>
local opening = {}

--- The file a session URI names, normalized (the server and the editor may spell one file's URI
--- differently); a URI that names no file is its own key; nil for anything but a string.
---@param uri any
---@return string|nil
function M.session_path(uri)
  if type(uri) ~= 'string' then
    return nil
  end
  local ok, path = pcall(vim.uri_to_fname, uri)
  return ok and vim.fs.normalize(path) or uri
end

--- Whether a request for session `uri` would wait for its open now.
---@param uri string
---@return boolean
function M.opening(uri)
  local key = M.session_path(uri)
  return key ~= nil and opening[key] ~= nil
end

local send

--- Sends a request; `handler(err, result)` runs on the main loop. Returns the request id (for
--- `cancel`) when it could be sent at once; requests made while the server starts, or for a
--- session whose open is not answered yet, are sent as soon as they may be (and have no id to
--- cancel).
---@param method string
---@param params table
---@param handler fun(err: table|nil, result: any)
---@return integer|nil
function M.request(method, params, handler)
  local key = M.session_path(type(params) == 'table' and params.uri or nil)
  local gate = key and opening[key]
  if method == protocol.OPEN and key then
    gate = gate or { opens = 0, waiting = {} }
    opening[key] = gate
    gate.opens = gate.opens + 1
    return send(method, params, function(err, result)
      gate.opens = gate.opens - 1
      if gate.opens == 0 and opening[key] == gate then
        opening[key] = nil
        for _, go in ipairs(gate.waiting) do
          go()
        end
      end
      handler(err, result)
    end)
  end
  if gate then
    table.insert(gate.waiting, function()
      M.request(method, params, handler)
    end)
    return nil
  end
  return send(method, params, handler)
end

---@param method string
---@param params table
---@param handler fun(err: table|nil, result: any)
---@return integer|nil
send = function(method, params, handler)
  local c, err = M.ensure()
  if not c then
    vim.schedule(function()
      handler({ code = -32603, message = err }, nil)
    end)
    return nil
  end
  if c.initialized and #starting == 0 then
    return raw_request(c, method, params, handler)
  end
  when_ready(c, function(ready)
    if ready then
      raw_request(c, method, params, handler)
    else
      handler({ code = -32603, message = 'the server did not start (see :checkhealth sessiontree and :LspLog)' }, nil)
    end
  end)
  return nil
end

--- Sends a request and waits for the answer.
---@param method string
---@param params table
---@param timeout_ms integer|nil
---@return any result
---@return table|nil err
function M.request_sync(method, params, timeout_ms)
  local done, res, rerr = false, nil, nil
  M.request(method, params, function(err, result)
    done, res, rerr = true, result, err
  end)
  if not vim.wait(timeout_ms or 10000, function()
    return done
  end, 5) then
    return nil, { code = -32603, message = method .. ' timed out' }
  end
  return res, rerr
end

--- Sends `$/cancelRequest` for a pending request.
---@param id integer|nil
function M.cancel(id)
  local c = M.get()
  if c and id then
    if inflight[id] then
      inflight[id].cancelled = true
    end
    if vim.fn.has('nvim-0.11') == 1 then
      c:cancel_request(id)
    else
      c.cancel_request(id) ---@diagnostic disable-line
    end
  end
end

--- The server's `capabilities.experimental.sessionTree` (`version`, `features`), if it announced one.
---@return { version: integer, features: string[] }|nil
function M.server_experimental()
  local c = M.get()
  local exp = c and c.server_capabilities and c.server_capabilities.experimental
  return exp and exp.sessionTree or nil
end

--- Whether the server says branch summaries are enabled: a `summaries`/`branchSummary` feature,
--- or `experimental.sessionTree.branchSummary` (`true` or `{ enabled = true }`).
---@return boolean
function M.summaries_enabled()
  if M.has_feature('summaries') or M.has_feature('branchSummary') then
    return true
  end
  local exp = M.server_experimental()
  local bs = exp and exp.branchSummary
  return bs == true or (type(bs) == 'table' and bs.enabled == true)
end

--- Whether the server announced a feature (`features` of `experimental.sessionTree`).
---@param name string
---@return boolean
function M.has_feature(name)
  local exp = M.server_experimental()
  return exp ~= nil and vim.tbl_contains(exp.features or {}, name)
end

--- A one-line message for an error answer (`message`, plus `data.kind` when present).
---@param err table|string
---@return string
function M.describe(err)
  if type(err) ~= 'table' then
    return tostring(err)
  end
  local kind = type(err.data) == 'table' and err.data.kind or nil
  return (err.message or 'error') .. (kind and (' [' .. kind .. ']') or '')
end

--- The `data.kind` of an error answer.
---@param err table|nil
---@return string|nil
function M.kind(err)
  return type(err) == 'table' and type(err.data) == 'table' and err.data.kind or nil
end

--- Stops the client (tests, `:SessionTree` after a rebuild).
---@param force boolean|nil
function M.stop(force)
  local c = M.get()
  if c then
    if vim.fn.has('nvim-0.11') == 1 then
      c:stop(force)
    else
      c.stop(force) ---@diagnostic disable-line
    end
  end
  client_id = nil
end

return M
