---@brief
--- The public entry points behind the commands: `setup()` (optional), open the tree for the
--- workspace's current session or a picked one, branch, label, search, filter, send. Each one
--- resolves what it needs (the session, the entry) and hands over to panel/actions/chat.

local M = {}

--- The oldest Neovim the plugin runs on.
M.MIN_NVIM = '0.10'

---@param msg string
---@param level integer|nil
local function notify(msg, level)
  vim.notify('sessiontree: ' .. msg, level or vim.log.levels.INFO)
end

--- Whether this Neovim is new enough; says so clearly when it is not.
---@return boolean
function M.supported()
  if vim.fn.has('nvim-0.10') == 1 then
    return true
  end
  vim.notify(
    'sessiontree needs Neovim ' .. M.MIN_NVIM .. ' or newer (this is ' .. tostring(vim.version()) .. ')',
    vim.log.levels.ERROR
  )
  return false
end

--- Optional: sets options (see `:help sessiontree-options`).
---@param opts sessiontree.Options|table|nil
function M.setup(opts)
  require('sessiontree.config').setup(opts)
end

--- The session file of the current buffer, when it is one (`*.jsonl`).
---@return string|nil uri
local function current_buffer_session()
  local name = vim.api.nvim_buf_get_name(0)
  if name:match('%.jsonl$') and vim.fn.filereadable(name) == 1 then
    return vim.uri_from_fname(vim.fn.fnamemodify(name, ':p'))
  end
  return nil
end

--- The workspace's sessions (newest first), from `sessionTree/listSessions`.
---@param cb fun(sessions: table[]|nil, err: table|nil)
function M.list_sessions(cb)
  local client = require('sessiontree.client')
  local protocol = require('sessiontree.protocol')
  -- The working directory is named explicitly: a client started by `vim.lsp.enable` may have been
  -- initialized with another workspace folder (or none).
  client.request(protocol.LIST_SESSIONS, { folders = { vim.uri_from_fname(vim.fn.getcwd()) } }, function(err, result)
    cb(result and result.sessions or nil, err)
  end)
end

--- A one-line description of a session for pickers.
---@param s table a protocol `SessionInfo`
---@return string
function M.describe_session(s)
  local title = s.name or s.firstUserMessage or vim.fn.fnamemodify(s.path, ':t')
  local when = (s.modified or ''):gsub('T', ' '):gsub('%.%d+Z$', '')
  local live = s.liveWriter and ' · live' or ''
  return string.format('%s  (%s · %s · %d entries%s)', title, when, s.dialect, s.entryCount or 0, live)
end

--- Picks a session of the workspace with `vim.ui.select` and opens it in the panel.
function M.pick()
  if not M.supported() then
    return
  end
  M.list_sessions(function(sessions, err)
    if err then
      notify('listSessions: ' .. require('sessiontree.client').describe(err), vim.log.levels.ERROR)
      return
    end
    if not sessions or #sessions == 0 then
      notify('No sessions found for ' .. vim.fn.getcwd() .. ' (see :checkhealth sessiontree)', vim.log.levels.WARN)
      return
    end
    vim.ui.select(sessions, { prompt = 'Session', format_item = M.describe_session }, function(s)
      if s then
        require('sessiontree.panel').open(s.uri)
      end
    end)
  end)
end

--- `:SessionTree [file]`: the panel for `file`, the current buffer's session, the panel's session,
--- or the workspace's most recently modified session; with `pick`, a picker.
---@param opts { file: string|nil, pick: boolean|nil }|nil
function M.tree(opts)
  if not M.supported() then
    return
  end
  opts = opts or {}
  local panel = require('sessiontree.panel')
  if opts.pick then
    return M.pick()
  end
  if opts.file and opts.file ~= '' then
    -- A session of a configured store is named by its URI (redis://HOST:PORT/DB/PATH).
    if opts.file:match('^rediss?://') then
      return panel.open(opts.file)
    end
    return panel.open(vim.uri_from_fname(vim.fn.fnamemodify(opts.file, ':p')))
  end
  local here = current_buffer_session()
  if here then
    return panel.open(here)
  end
  if panel.state.uri then
    return panel.open(panel.state.uri)
  end
  M.list_sessions(function(sessions, err)
    if err then
      notify('listSessions: ' .. require('sessiontree.client').describe(err), vim.log.levels.ERROR)
      return
    end
    if not sessions or #sessions == 0 then
      notify(
        'No sessions found for ' .. vim.fn.getcwd() .. '; :SessionTree {file} opens one (see :checkhealth sessiontree)',
        vim.log.levels.WARN
      )
      return
    end
    panel.open(sessions[1].uri)
  end)
end

--- `:SessionOpen`: pick a session.
function M.open()
  if not M.supported() then
    return
  end
  M.pick()
end

--- `:SessionBranch`: the user-message picker of `/branch`.
function M.branch()
  if not M.supported() then
    return
  end
  require('sessiontree.actions').branch_picker()
end

--- `:SessionLabel [text]` (on the selected row): with text sets the label, without asks for it;
--- `clear` removes it.
---@param text string|nil
---@param clear boolean|nil
function M.label(text, clear)
  if not M.supported() then
    return
  end
  local panel = require('sessiontree.panel')
  local actions = require('sessiontree.actions')
  local row = panel.selected_row()
  if not row or not row.id then
    notify('select an entry in the tree first (:SessionTree)', vim.log.levels.WARN)
    return
  end
  if clear then
    actions.set_label(row.id, nil)
  elseif text and text ~= '' then
    actions.set_label(row.id, text)
  else
    actions.label()
  end
end

--- `:SessionSearch [text]`: sets the search, or starts typing it in the panel.
---@param text string|nil
function M.search(text)
  if not M.supported() then
    return
  end
  local panel = require('sessiontree.panel')
  if not panel.state.uri then
    notify('no session open (:SessionTree first)', vim.log.levels.WARN)
    return
  end
  if text and text ~= '' then
    require('sessiontree.search').set(text)
    return
  end
  if panel.is_open() then
    vim.api.nvim_set_current_win(panel.state.win)
  end
  require('sessiontree.search').start()
end

--- `:SessionFilter {mode}`.
---@param mode string
function M.filter(mode)
  if not M.supported() then
    return
  end
  local config = require('sessiontree.config')
  local wire = config.filter_mode(mode or '')
  if not wire then
    notify(
      'unknown filter `' .. tostring(mode) .. '`; one of ' .. table.concat(config.FILTERS, ', '),
      vim.log.levels.ERROR
    )
    return
  end
  require('sessiontree.search').set_filter(wire)
end

--- `:SessionSend [text]`: sends the chat input (or `text`) to the session's agent, which answers
--- from the leaf (when the agent cannot run, appends it without an answer).
---@param text string|nil
function M.send(text)
  if not M.supported() then
    return
  end
  require('sessiontree.chat').send(text ~= '' and text or nil)
end

--- `:SessionAppend [text]`: appends the chat input (or `text`) as a user message at the leaf
--- without running the agent.
---@param text string|nil
function M.append(text)
  if not M.supported() then
    return
  end
  require('sessiontree.chat').append(text ~= '' and text or nil)
end

--- `:SessionStop`: stops the agent's answer.
function M.stop()
  if not M.supported() then
    return
  end
  require('sessiontree.chat').stop()
end

--- `:SessionInstallBridge [pi|omp]`: installs the bridge for agents run in a terminal.
---@param agent string|nil
function M.install_bridge(agent)
  if not M.supported() then
    return
  end
  require('sessiontree.chat').install_bridge(agent ~= '' and agent or nil)
end

--- `:SessionName {name}`: renames the panel's session (pi `session_info`, omp title).
---@param name string
function M.name(name)
  if not M.supported() then
    return
  end
  local panel = require('sessiontree.panel')
  local client = require('sessiontree.client')
  if not panel.state.uri then
    notify('no session open (:SessionTree first)', vim.log.levels.WARN)
    return
  end
  if not name or vim.trim(name) == '' then
    notify('give the new name: :SessionName {name}', vim.log.levels.WARN)
    return
  end
  client.request(
    require('sessiontree.protocol').SET_NAME,
    { uri = panel.state.uri, name = vim.trim(name) },
    function(err, result)
      if err then
        notify('name: ' .. client.describe(err), vim.log.levels.ERROR)
      elseif result.applied then
        panel.state.name = result.name or panel.state.name
        panel.update_header()
        notify('Session named ' .. tostring(result.name))
      else
        notify('The name was not changed')
      end
    end
  )
end

--- `:SessionChat`: opens the chat for the panel's session.
function M.chat()
  if not M.supported() then
    return
  end
  require('sessiontree.chat').open()
end

return M
