-- What the user does, against the real server and copies of real session files: Enter on a user
-- message moves the leaf and prefills the chat input, "Already at this point", sending from the
-- chat, labels, /branch into a new file, and an append by another process showing up live.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')

H.run(function()
  local dir = H.start({
    ['c06.jsonl'] = H.fixture('c06-branch-basic/omp/session.jsonl'),
    ['c05.jsonl'] = H.fixture('c05-labels/omp/session.jsonl'),
  })
  local c06 = H.session('c06.jsonl')
  local messages = H.messages()
  local said = messages.said

  local panel = require('sessiontree.panel')
  local chat = require('sessiontree.chat')
  local st = panel.state
  H.check(H.show(c06), ':SessionTree {file} drew rows')
  H.check(
    st.leaf == '662d009f' and H.cursor_id() == '662d009f',
    'c06 opens at its leaf (662d009f)',
    { leaf = st.leaf, cursor = H.cursor_id() }
  )

  -- Enter on the leaf: nothing moves.
  H.feed('<CR>')
  H.check(
    H.wait(function()
      return said('Already at this point')
    end),
    'Enter on the leaf says "Already at this point"',
    messages.texts()
  )

  -- Enter on a user message: the leaf moves to its parent and its text fills the chat input.
  H.check(H.goto_row('c498f61c'), 'cursor on "user: Paris"')
  H.check(H.press('<CR>'), 'Enter redraws')
  H.check(
    H.wait(function()
      return st.leaf == '42864a3e'
    end),
    "the leaf moved to the message's parent (42864a3e)",
    st.leaf
  )
  H.check(H.row('42864a3e') and H.row('42864a3e').isLeaf, 'the panel marks the new leaf')
  H.check(
    H.wait(function()
      return chat.input_text() == 'Paris'
    end),
    'the chat input is prefilled with the message text',
    chat.input_text()
  )
  H.check(chat.is_open(), 'the chat opened beside the panel')
  H.check(
    H.wait(function()
      return H.chat_text():find('Where to?', 1, true) and not H.chat_text():find('Rome', 1, true)
    end),
    'the chat shows the conversation along the new active path',
    H.chat_lines()
  )
  H.check(vim.bo[chat.state.conv_buf].filetype == 'markdown', 'the chat is a markdown buffer')

  -- Send from the chat with the live agent turned off: the input says what <CR> does, and the
  -- message is appended at the leaf without an answer, saying so.
  H.check(
    H.wait(function()
      return vim.wo[chat.state.input_win].winbar:find(
        'appends without an answer (agent.disabled is set in setup())',
        1,
        true
      )
    end),
    'the input says <CR> appends without an answer, and why',
    vim.wo[chat.state.input_win].winbar
  )
  local before = #vim.fn.readfile(c06)
  H.check(
    H.redraw_after(function()
      H.send('Paris, for three days')
    end),
    '<CR> in the chat input sends and the panel redraws'
  )
  H.check(
    H.wait(function()
      return #vim.fn.readfile(c06) == before + 1
    end),
    'one line appended to the file'
  )
  local last = vim.json.decode(vim.fn.readfile(c06)[before + 1])
  H.check(
    last.message
      and last.message.role == 'user'
      and last.message.content == 'Paris, for three days'
      and last.parentId == '42864a3e',
    'it is a user message under the leaf',
    last
  )
  H.check(
    H.wait(function()
      return st.leaf == last.id and H.row(last.id) ~= nil
    end),
    'the new message is a row and the leaf',
    st.leaf
  )
  H.check(chat.input_text() == '', 'the input is cleared after sending')
  H.check(
    said('appended without an answer: the live agent is turned off (agent.disabled) (agent.disabled is set in setup())'),
    'it says the message was appended without an answer, and why',
    messages.texts()
  )
  H.check(
    H.wait(function()
      return H.chat_text():find('three days', 1, true)
    end),
    'the chat shows the sent message'
  )
  vim.cmd('SessionSend')
  H.check(said('nothing to send'), ':SessionSend with an empty input says there is nothing to send')
  -- :SessionAppend writes without running the agent (whatever the agent's state).
  local lines_before = #vim.fn.readfile(c06)
  vim.cmd('SessionAppend And a museum pass')
  H.check(
    H.wait(function()
      local lines = vim.fn.readfile(c06)
      local e = #lines == lines_before + 1 and vim.json.decode(lines[#lines])
      return e and e.message and e.message.content == 'And a museum pass' and said('(without an answer)')
    end),
    ':SessionAppend {text} appends a user message and says it was not answered',
    messages.texts()
  )

  -- Labels: L with vim.ui.input, then :SessionLabel text, then :SessionLabel! clears.
  vim.ui.input = function(opts, on_confirm)
    on_confirm('trip start')
  end
  H.goto_row('2ececf0f')
  H.check(H.press('L'), 'L redraws')
  H.check(
    H.wait(function()
      local row = H.row('2ececf0f')
      return row and row.label == 'trip start' and H.panel_lines()[1]:find('[trip start]', 1, true)
    end),
    'the label appears on the row',
    H.panel_lines()[1]
  )
  local labelled = H.panel_groups().SessionTreeLabel
  H.check(labelled, 'the label is highlighted with SessionTreeLabel')
  H.goto_row('2ececf0f')
  H.command('SessionLabel origin')
  H.check(
    H.wait(function()
      return H.row('2ececf0f').label == 'origin'
    end),
    ':SessionLabel origin changes it',
    H.row('2ececf0f')
  )
  H.goto_row('2ececf0f')
  H.command('SessionLabel!')
  H.check(
    H.wait(function()
      return H.row('2ececf0f').label == nil and not H.panel_lines()[1]:find('[', 1, true)
    end),
    ':SessionLabel! clears it',
    H.panel_lines()[1]
  )

  -- Live: another process appends an assistant reply under the leaf.
  local leaf = st.leaf
  local shown = nil -- the row where the panel shows the leaf (the last row of the active path)
  for _, row in ipairs(st.rows) do
    if row.onActivePath then
      shown = row.id
    end
  end
  H.goto_row(shown)
  H.check(
    H.append_entry(c06, {
      type = 'message',
      id = 'f00dfeed',
      parentId = leaf,
      timestamp = '2025-01-01T00:01:00.000Z',
      message = {
        role = 'assistant',
        content = { { type = 'text', text = 'Three days in Paris: Louvre, Orsay, Montmartre.' } },
        api = 'fake-api',
        provider = 'anthropic',
        model = 'claude-test',
        stopReason = 'stop',
        timestamp = 1735689660000,
      },
    }),
    'another process appended a line'
  )
  H.check(
    H.wait(function()
      return H.row('f00dfeed') ~= nil and st.leaf == 'f00dfeed'
    end, 10000),
    'the append shows up live as the new leaf',
    st.leaf
  )
  H.check(
    H.cursor_id() == 'f00dfeed',
    'the cursor that sat on the leaf followed it',
    { H.cursor_id(), shown, st.selection, H.panel_lines() }
  )
  H.check(
    vim.deep_equal(H.panel_lines(), (H.server_lines())),
    'the redrawn rows equal the server lines',
    { H.panel_lines(), (H.server_lines()) }
  )
  H.check(
    H.wait(function()
      return H.chat_text():find('Montmartre', 1, true)
    end, 5000),
    'the chat follows the append too'
  )

  -- A selection elsewhere stays put when the agent appends.
  H.goto_row('c498f61c')
  H.append_entry(c06, {
    type = 'message',
    id = 'f00dfee2',
    parentId = 'f00dfeed',
    timestamp = '2025-01-01T00:02:00.000Z',
    message = { role = 'user', content = 'And the food?', timestamp = 1735689720000 },
  })
  H.check(
    H.wait(function()
      return H.row('f00dfee2') ~= nil
    end, 10000),
    'a second append shows up'
  )
  H.check(H.cursor_id() == 'c498f61c', 'the cursor stayed on the entry the user chose', H.cursor_id())

  -- Summaries: with summaries on, Enter asks; "No summary" navigates; the wire choice is sent.
  local actions0 = require('sessiontree.actions')
  local client0 = require('sessiontree.client')
  H.check(
    not actions0.summaries_enabled(),
    "summaries = 'auto': this server announces no summaries, so Enter does not ask"
  )
  local real_exp = client0.server_experimental
  client0.server_experimental = function()
    return { version = 1, features = {}, branchSummary = { enabled = true } }
  end
  H.check(actions0.summaries_enabled(), "summaries = 'auto': asks once the server says branchSummary is enabled")
  client0.server_experimental = real_exp
  require('sessiontree.config').options.summaries = true
  local asked
  vim.ui.select = function(items, opts, on_choice)
    asked = { items = items, prompt = opts.prompt }
    on_choice(items[1], 1)
  end
  H.goto_row('f00dfeed')
  H.press('<CR>')
  H.check(
    asked
      and asked.prompt == 'Summarize branch?'
      and vim.deep_equal(asked.items, { 'No summary', 'Summarize', 'Summarize with custom prompt' }),
    'with summaries on, Enter asks "Summarize branch?"',
    asked
  )
  H.check(
    H.wait(function()
      return st.leaf == 'f00dfeed'
    end),
    '"No summary" navigates (leaf f00dfeed)',
    st.leaf
  )
  -- "Summarize" (abandoning the f00dfeed branch) without a model configured: a clear error, nothing moves.
  vim.ui.select = function(items, opts, on_choice)
    on_choice(items[2], 2)
  end
  messages.clear()
  H.goto_row('6c055220')
  H.feed('<CR>')
  H.check(
    H.wait(function()
      return said('navigate:') or said('Moved to')
    end),
    'Summarize got an answer',
    messages.texts()
  )
  -- (The server's answer without a model is noModel; <C-c> on a running model summary and a
  -- summary written by a model: summary_spec.lua.)
  H.check(
    said('noModel') and st.leaf == 'f00dfeed',
    'no model configured: the error is shown and nothing moved',
    messages.texts()
  )
  -- "Summarize with custom prompt" asks for the instructions first.
  local prompted
  vim.ui.select = function(items, opts, on_choice)
    on_choice(items[3], 3)
  end
  vim.ui.input = function(opts, on_confirm)
    prompted = opts.prompt
    on_confirm('Focus on the museums')
  end
  messages.clear()
  H.goto_row('6c055220')
  H.feed('<CR>')
  H.check(
    H.wait(function()
      return said('navigate:') or said('Moved to')
    end),
    'Summarize with custom prompt got an answer',
    messages.texts()
  )
  H.check(prompted and prompted:find('instructions', 1, true), 'custom instructions asked with vim.ui.input', prompted)
  H.check(
    require('sessiontree.actions').pending_navigate == nil and st.busy == nil,
    'no navigation left pending, header not busy'
  )
  -- <C-c> cancelling a running model summary, and a summary written by a model: summary_spec.lua.
  require('sessiontree.config').options.summaries = 'auto'

  -- /branch: pick "Rome", a new session file is written and shown, with "Rome" in the input.
  local offered
  vim.ui.select = function(items, opts, on_choice)
    offered = items
    for _, it in ipairs(items) do
      if it.id == '6c055220' then
        return on_choice(it, 1)
      end
    end
  end
  local old_uri = st.uri
  local files_before = vim.fn.glob(dir .. '/**/*.jsonl', false, true)
  vim.cmd('SessionBranch')
  H.check(
    H.wait(function()
      return not panel.same_uri(st.uri, old_uri) and #st.rows > 0
    end, 10000),
    ':SessionBranch switched the panel to the new session',
    st.uri
  )
  local user_ids = vim.tbl_map(function(n)
    return n.id
  end, offered or {})
  H.check(
    vim.tbl_contains(user_ids, '6c055220')
      and vim.tbl_contains(user_ids, 'c498f61c')
      and not vim.tbl_contains(user_ids, '42864a3e'),
    'the picker offers the user messages only',
    user_ids
  )
  local new_path = vim.uri_to_fname(st.uri)
  H.check(vim.fn.filereadable(new_path) == 1, 'the new session file exists: ' .. new_path)
  H.check(#vim.fn.glob(dir .. '/**/*.jsonl', false, true) >= #files_before, 'no file lost')
  H.check(
    H.wait(function()
      return chat.input_text() == 'Rome'
    end),
    'the branched message text is in the input',
    chat.input_text()
  )
  local texts = table.concat(H.panel_lines(), '\n')
  H.check(
    texts:find('Where to?', 1, true) and not texts:find('Rome is historic', 1, true),
    'the new session holds the path before the message',
    H.panel_lines()
  )
  H.check(vim.fn.readfile(c06)[1]:find('"type":"title"', 1, true) ~= nil, 'the source file keeps its title slot')

  -- :SessionName renames the (branched) session; the header follows.
  H.check(H.command('SessionName Rome trip'), ':SessionName redraws')
  H.check(
    H.wait(function()
      return panel.header():find('Rome trip', 1, true) ~= nil
    end),
    'the header shows the new name',
    panel.header()
  )
  H.check(
    vim.fn.readfile(vim.uri_to_fname(st.uri))[1]:find('Rome trip', 1, true) ~= nil,
    'omp: the title slot holds the name'
  )

  -- c05 (labels written by the agent) draws its labels.
  H.show(H.session('c05.jsonl'))
  local any_label = false
  for _, row in ipairs(st.rows) do
    any_label = any_label or (row.label ~= nil)
  end
  H.check(
    any_label and table.concat(H.panel_lines(), '\n'):find('%[') ~= nil,
    "c05: the agent's labels are drawn",
    H.panel_lines()
  )
  H.check(
    H.wait(function()
      return panel.same_uri(chat.state.uri, st.uri) and H.chat_text():find('First', 1, true)
    end),
    "the open chat switched to the panel's new session",
    H.chat_lines()
  )
  vim.api.nvim_set_current_win(chat.state.input_win)
  H.feed('q')
  H.check(not chat.is_open(), 'q in the chat closes it')
  vim.cmd('SessionChat')
  H.check(
    chat.is_open() and vim.api.nvim_get_current_win() == chat.state.input_win,
    ':SessionChat opens it again, in the input'
  )
  H.check(
    H.wait(function()
      return chat.state.draws > 0 and #H.chat_lines() > 1
    end),
    'the reopened chat shows the conversation'
  )
  vim.api.nvim_set_current_win(st.win)
  H.press('<M-l>')
  H.check(st.filter == 'labeledOnly' and #st.rows > 0 and vim.tbl_isempty(vim.tbl_filter(function(r)
    return r.label == nil
  end, st.rows)), '<M-l>: only labelled rows', H.panel_lines())
end)
