---@brief
--- What the user does: the panel's keys (from `config.options.keys`) and the flows behind them —
--- navigate (the `/tree` Enter, with the summary prompt and cancel), label, branch (the `/branch`
--- picker) and the entry preview; filters and the search are `search.lua`'s. The server decides
--- every outcome; these functions ask, then report what it answered.

local client = require('sessiontree.client')
local config = require('sessiontree.config')
local panel = require('sessiontree.panel')
local protocol = require('sessiontree.protocol')
local search = require('sessiontree.search')

local M = {}

--- The request id of a navigation in flight (for `<C-c>`).
---@type integer|nil
M.pending_navigate = nil

---@param msg string
---@param level integer|nil
local function notify(msg, level)
  vim.notify('sessiontree: ' .. msg, level or vim.log.levels.INFO)
end

--- Whether to ask "Summarize branch?": `summaries = true/false`, or 'auto' = the server announced
--- summaries (feature `summaries` or `branchSummary` in `experimental.sessionTree.features`).
---@return boolean
function M.summaries_enabled()
  local opt = config.options.summaries
  if opt == 'auto' then
    return client.summaries_enabled()
  end
  return opt == true
end

M.SUMMARY_CHOICES = { 'No summary', 'Summarize', 'Summarize with custom prompt' }
local CHOICE_WIRE = { 'none', 'summarize', 'custom' }

--- Reports a navigation answer: the message, the chat prefill, the redraw.
---@param result table a protocol `NavigateResult`
local function navigated(result)
  if result.alreadyAtThisPoint then
    notify('Already at this point')
    return
  end
  if result.cancelled then
    notify('Navigation cancelled by a hook; nothing moved')
    return
  end
  if result.decision == 'reopenAsk' then
    notify(
      "That is an answer to the agent's question: the agent asks it again (tool call "
        .. tostring(result.toolCallId)
        .. '); nothing moved'
    )
    return
  end
  if result.editorText and result.editorText ~= '' then
    require('sessiontree.chat').prefill(panel.state.uri, result.editorText)
  end
  local where = result.newLeaf and ('leaf ' .. result.newLeaf) or 'a new root (the next message starts a new tree)'
  local summary = result.summaryEntryId and (' with summary ' .. result.summaryEntryId) or ''
  if result.summarySkipped then
    summary = ' (nothing was abandoned, so no summary was written)'
  end
  notify('Moved to ' .. where .. summary)
  -- As in the agent, the cursor goes to the new leaf.
  panel.state.selection = nil
  if config.options.panel.close_on_select then
    panel.close()
  else
    panel.refresh()
  end
  require('sessiontree.chat').refresh()
end

--- Sends `sessionTree/navigate` for `target`.
---@param target string entry id
---@param summarize 'none'|'summarize'|'custom'
---@param instructions string|nil
function M.navigate(target, summarize, instructions)
  local st = panel.state
  if M.pending_navigate then
    notify('a navigation is already running (<C-c> cancels it)', vim.log.levels.WARN)
    return
  end
  local params = {
    uri = st.uri,
    targetId = target,
    summarize = summarize,
    customInstructions = instructions,
    baseRevision = st.revision,
  }
  local long = summarize ~= 'none'
  if long then
    panel.set_busy('summarizing… <C-c> cancels')
    notify('Summarizing the branch… (<C-c> in the panel cancels)')
  end
  local id
  id = client.request(protocol.NAVIGATE, params, function(err, result)
    if M.pending_navigate == id then
      M.pending_navigate = nil
    end
    panel.set_busy(nil)
    if err then
      if err.code == -32800 then
        notify('Navigation cancelled; nothing moved')
      elseif client.kind(err) == 'staleRevision' then
        notify('The session changed meanwhile; the tree is redrawn, try again', vim.log.levels.WARN)
        panel.refresh()
      else
        notify('navigate: ' .. client.describe(err), vim.log.levels.ERROR)
      end
      return
    end
    navigated(result)
    if not result.alreadyAtThisPoint and not result.cancelled then
      require('sessiontree.rewind').after_navigate(params.uri, target)
    end
  end)
  M.pending_navigate = id
end

--- `<CR>`: navigate to the row under the cursor (asking about a summary when enabled).
function M.select()
  local row = panel.selected_row()
  if not row or not row.id then
    return
  end
  if row.isLeaf or not M.summaries_enabled() then
    M.navigate(row.id, 'none')
    return
  end
  vim.ui.select(M.SUMMARY_CHOICES, { prompt = 'Summarize branch?' }, function(_, idx)
    if not idx then
      return
    end
    local choice = CHOICE_WIRE[idx]
    if choice == 'custom' then
      vim.ui.input({ prompt = 'Custom summarization instructions: ' }, function(text)
        if text == nil then
          return
        end
        M.navigate(row.id, 'custom', text)
      end)
    else
      M.navigate(row.id, choice)
    end
  end)
end

--- `<C-c>`: cancels a navigation in flight (the leaf stays where it was).
function M.cancel()
  if not M.pending_navigate then
    return
  end
  client.cancel(M.pending_navigate)
  notify('Cancelling…')
end

--- How a message names entry `id`: its row's text (cut), else the id.
---@param id string
---@return string
local function entry_name(id)
  for _, row in ipairs(panel.state.rows) do
    if row.id == id and row.text and row.text ~= '' then
      return '"' .. require('sessiontree.render').cut(row.text, 50) .. '"'
    end
  end
  return id
end

--- Sets (or clears with nil/'') the label of entry `id`, and says so.
---@param id string
---@param label string|nil
---@param done fun(err: table|nil)|nil
function M.set_label(id, label, done)
  local st = panel.state
  local setting = label ~= nil and label ~= ''
  local name = entry_name(id)
  client.request(protocol.SET_LABEL, {
    uri = st.uri,
    targetId = id,
    label = setting and label or vim.NIL,
  }, function(err)
    if err then
      notify('label: ' .. client.describe(err), vim.log.levels.ERROR)
    else
      notify(setting and ('Label [' .. label .. '] set on ' .. name) or ('Label cleared on ' .. name))
      panel.refresh()
    end
    if done then
      done(err)
    end
  end)
end

--- `L`: edits the label of the row under the cursor (empty clears it).
function M.label()
  local row = panel.selected_row()
  if not row or not row.id then
    return
  end
  vim.ui.input({ prompt = 'Label (empty clears): ', default = row.label or '' }, function(text)
    if text == nil then
      return
    end
    M.set_label(row.id, vim.trim(text))
  end)
end

--- Branches (`/branch`) from user message `id` into a new session file, then shows the new session
--- with the message's text back in the chat input.
---@param id string
---@param done fun(err: table|nil, result: table|nil)|nil
function M.branch(id, done)
  local st = panel.state
  client.request(protocol.BRANCH, { uri = st.uri, entryId = id, baseRevision = st.revision }, function(err, result)
    if err then
      notify('branch: ' .. client.describe(err), vim.log.levels.ERROR)
    elseif result.cancelled then
      notify('Branch cancelled by a hook')
    else
      local where = result.newPath or result.newUri or '?'
      notify(
        'Branched into '
          .. where
          .. (
            result.written and ''
            or ' (not on disk yet: written at the first assistant reply; <CR> in the chat sends to pi, which'
              .. ' writes it with its answer; until then it is in memory only, :SessionAppend does not append'
              .. ' into it, and it is gone once another session is shown)'
          )
      )
      if result.newUri then
        panel.open(result.newUri, function(open_err)
          if not open_err then
            require('sessiontree.chat').prefill(result.newUri, result.editorText)
          end
        end)
      end
    end
    if done then
      done(err, result)
    end
  end)
end

--- `:SessionBranch`: pick one of the session's user messages, then branch from it.
function M.branch_picker()
  local st = panel.state
  if not st.uri then
    notify('no session open (:SessionTree first)', vim.log.levels.WARN)
    return
  end
  client.request(protocol.TREE, { uri = st.uri, offset = 0, limit = 0 }, function(err, result)
    if err then
      notify('tree: ' .. client.describe(err), vim.log.levels.ERROR)
      return
    end
    local items = {}
    for _, node in ipairs(result.nodes or {}) do
      if node.kind == 'message' and node.role == 'user' and node.id then
        table.insert(items, node)
      end
    end
    if #items == 0 then
      notify('No user messages to branch from')
      return
    end
    -- Newest first, as the agent's picker opens on the most recent message.
    table.sort(items, function(a, b)
      return (a.line or 0) > (b.line or 0)
    end)
    vim.ui.select(items, {
      prompt = 'Branch from message',
      format_item = function(node)
        return (node.onActivePath and '• ' or '  ')
          .. (node.label and ('[' .. node.label .. '] ') or '')
          .. node.preview
      end,
    }, function(node)
      if node then
        M.branch(node.id)
      end
    end)
  end)
end

--- `b` in the panel: branch from the row under the cursor (a user message).
function M.branch_here()
  local row = panel.selected_row()
  if not row or not row.id then
    return
  end
  M.branch(row.id)
end

--- `K`: the entry under the cursor as markdown in a float.
function M.preview()
  local row = panel.selected_row()
  if not row or not row.id then
    return
  end
  client.request(protocol.ENTRY, { uri = panel.state.uri, id = row.id }, function(err, result)
    if err then
      notify('entry: ' .. client.describe(err), vim.log.levels.ERROR)
      return
    end
    local lines = vim.split(result.markdown or '', '\n', { plain = true })
    vim.lsp.util.open_floating_preview(
      lines,
      'markdown',
      { border = 'rounded', max_width = 100, focus_id = 'sessiontree.entry' }
    )
  end)
end

-- Progress the server reports (`$/progress`, e.g. while a summary is written) goes to the header.
vim.api.nvim_create_autocmd('LspProgress', {
  group = vim.api.nvim_create_augroup('sessiontree.progress', { clear = true }),
  callback = function(ev)
    local c = client.get()
    local data = ev.data or {}
    if not c or data.client_id ~= c.id then
      return
    end
    local value = data.params and data.params.value or {}
    if value.kind == 'end' then
      panel.set_busy(M.pending_navigate and 'summarizing… <C-c> cancels' or nil)
      return
    end
    local text = vim.trim(table.concat({ value.title or '', value.message or '' }, ' '))
    if value.percentage then
      text = text .. ' ' .. value.percentage .. '%'
    end
    panel.set_busy(text .. (M.pending_navigate and ' · <C-c> cancels' or ''))
  end,
})

---@param lhs string|string[]|false|nil
---@return string[]
local function lhs_list(lhs)
  if not lhs then
    return {}
  end
  if type(lhs) == 'string' then
    return { lhs }
  end
  return lhs
end

--- Key name → what it does, in the panel.
---@type table<string, fun()>
M.panel_actions = {
  down = function()
    panel.move(1)
  end,
  up = function()
    panel.move(-1)
  end,
  page_up = function()
    panel.page(-1)
  end,
  page_down = function()
    panel.page(1)
  end,
  select = function()
    -- While typing a search, Enter confirms it (as `/` does in Vim); the next Enter selects.
    if panel.state.searching then
      search.stop()
      return
    end
    M.select()
  end,
  search = function()
    search.start()
  end,
  search_backspace = function()
    search.backspace()
  end,
  escape = function()
    panel.escape()
  end,
  label = M.label,
  filter_next = function()
    search.cycle_filter(1)
  end,
  filter_prev = function()
    search.cycle_filter(-1)
  end,
  filter_default = function()
    search.set_filter('default')
  end,
  filter_no_tools = function()
    search.set_filter('noTools')
  end,
  filter_user_only = function()
    search.set_filter('userOnly')
  end,
  filter_labeled_only = function()
    search.set_filter('labeledOnly')
  end,
  filter_all = function()
    search.set_filter('all')
  end,
  fold_or_up = function()
    require('sessiontree.fold').fold_or_up()
  end,
  unfold_or_down = function()
    require('sessiontree.fold').unfold_or_down()
  end,
  fold = function()
    require('sessiontree.fold').fold()
  end,
  unfold = function()
    require('sessiontree.fold').unfold()
  end,
  toggle_fold = function()
    require('sessiontree.fold').toggle()
  end,
  unfold_all = function()
    require('sessiontree.fold').unfold_all()
  end,
  branch = M.branch_here,
  chat = function()
    require('sessiontree.chat').open(panel.state.uri)
  end,
  preview = M.preview,
  cancel = M.cancel,
  close = function()
    panel.close()
  end,
}

--- Maps the panel keys in `buf`.
---@param buf integer
function M.attach(buf)
  for name, fn in pairs(M.panel_actions) do
    for _, lhs in ipairs(lhs_list(config.options.keys[name])) do
      vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, silent = true, desc = 'sessiontree: ' .. name })
    end
  end
end

return M
