-- The chat drawn from the server's display blocks (sessionTree/transcript), against the real server
-- and sessions written by the real agents: every message of the transcript, tool calls and results
-- as one folded line each, thinking folded, <CR> to open; a missing agent is said clearly (winbar
-- and message, naming the option) and <CR> then appends without an answer; the agent's dialogs are
-- answered through vim.ui.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')

H.run(function()
  local dir = H.workspace({
    ['c02.jsonl'] = H.fixture('c02-tool-calls/pi/session.jsonl'),
    ['c04.jsonl'] = H.fixture('c04-model-thinking/omp/session.jsonl'),
  })
  -- The agents named by the options do not exist: the chat must say so.
  H.setup(dir, { agent = { pi_path = dir .. '/no-such-pi', omp_path = dir .. '/no-such-omp' } })
  vim.cmd('runtime plugin/sessiontree.lua')
  local messages = H.messages()
  local said = messages.said

  local chat = require('sessiontree.chat')
  local protocol = require('sessiontree.protocol')
  local st = chat.state
  local c02 = H.session('c02.jsonl')
  H.show(c02)
  vim.cmd('SessionChat')
  local uri = require('sessiontree.panel').state.uri
  H.check(
    H.wait(function()
      return st.draws > 0 and st.conversation.status ~= nil
    end, 10000),
    'the chat drew the conversation and knows the agent state'
  )
  local lines = H.chat_lines

  -- Every block of the server's transcript is drawn: a tool call and a tool result as one line
  -- each (the server's own summaries), folded over their details.
  local transcript = H.ask(protocol.TRANSCRIPT, { uri = uri })
  local calls, results = {}, {}
  for _, item in ipairs(transcript.items) do
    for _, b in ipairs(item.blocks) do
      if b.kind == 'toolCall' then
        table.insert(calls, '⚙ ' .. b.summary)
      elseif b.kind == 'toolResult' then
        table.insert(results, (b.isError and '✗ ' or '↳ ') .. b.summary)
      end
    end
  end
  H.check(#calls > 0 and #results > 0, 'the session has tool calls and results', transcript.items)
  vim.api.nvim_set_current_win(st.conv_win)
  local function line_of(text)
    for i, l in ipairs(lines()) do
      if l == text then
        return i
      end
    end
  end
  for _, want in ipairs(vim.list_extend(vim.deepcopy(calls), results)) do
    local lnum = line_of(want)
    H.check(lnum ~= nil and vim.fn.foldclosed(lnum) == lnum, 'one folded line: ' .. want, lines())
  end
  local first = line_of(calls[1])
  if first then
    vim.api.nvim_win_set_cursor(st.conv_win, { first, 0 })
    H.feed('<CR>')
    H.check(vim.fn.foldclosed(first) == -1, '<CR> opens the tool call')
    H.check(
      (lines()[first + 1] or ''):match('^  [%[{]') ~= nil,
      'its arguments are under it (pretty JSON, indented)',
      { lines()[first], lines()[first + 1] }
    )
    -- A redraw keeps what the user opened.
    local draws = st.draws
    chat.refresh()
    H.wait(function()
      return st.draws > draws
    end)
    H.check(vim.fn.foldclosed(line_of(calls[1])) == -1, 'a redraw keeps the opened fold open')
    H.feed('<CR>')
    H.check(vim.fn.foldclosed(line_of(calls[1])) == line_of(calls[1]), '<CR> closes it again')
  end
  H.check(#vim.tbl_filter(function(l)
    return l == '## user'
  end, lines()) == #vim.tbl_filter(function(i)
    return i.role == 'user'
  end, transcript.items), 'a heading per user message of the transcript')

  -- The missing agent: the winbars say what <CR> will do; <CR> appends and says why.
  H.check(st.conversation.status.state == 'unavailable', 'the agent is unavailable', st.conversation.status)
  H.check(
    vim.wo[st.conv_win].winbar:find('pi · unavailable', 1, true) ~= nil,
    'the conversation winbar shows the agent unavailable',
    vim.wo[st.conv_win].winbar
  )
  H.check(
    vim.wo[st.input_win].winbar:find(
      '<CR> appends without an answer (set agent.pi_path in setup() to run the agent)',
      1,
      true
    ) ~= nil,
    'the input winbar says <CR> appends, and which option runs the agent',
    vim.wo[st.input_win].winbar
  )
  local before = #vim.fn.readfile(c02)
  H.send('Is anyone there?')
  H.check(
    H.wait(function()
      return #vim.fn.readfile(c02) == before + 1
    end),
    '<CR> appended the message to the file'
  )
  H.check(
    H.wait(function()
      return said('does not exist or cannot be run', vim.log.levels.WARN)
        and said('set agent.pi_path in setup()', vim.log.levels.WARN)
    end),
    'the message says the agent cannot run and which option to set',
    messages.list
  )
  H.check(
    H.wait(function()
      return table.concat(lines(), '\n'):find('> Appended without an answer: ', 1, true) ~= nil
        and table.concat(lines(), '\n'):find('Is anyone there?', 1, true) ~= nil
    end),
    'the chat shows the message and that it was not answered',
    lines()
  )

  -- Thinking (an omp session): one folded line.
  H.show(H.session('c04.jsonl'))
  H.check(
    H.wait(function()
      return st.conversation.uri ~= uri and table.concat(lines(), '\n'):find('▸ thinking', 1, true)
    end),
    'the omp session thinking is drawn as one line',
    lines()
  )
  local thinking = nil
  for i, l in ipairs(lines()) do
    if l:find('^▸ thinking') then
      thinking = thinking or i
    end
  end
  vim.api.nvim_set_current_win(st.conv_win)
  H.check(thinking and vim.fn.foldclosed(thinking) == thinking, 'the thinking is folded')
  H.check(
    H.wait(function()
      return st.conversation.status and st.conversation.status.agent == 'omp'
    end),
    'the state is the omp session agent',
    st.conversation.status
  )

  -- :SessionInstallBridge writes the bridge into the agent's extensions folder and says where.
  vim.cmd('SessionInstallBridge pi')
  local bridge = dir .. '/pi-agent/extensions/sessiontree-bridge.ts'
  H.check(
    H.wait(function()
      return vim.fn.filereadable(bridge) == 1 and said('installed the bridge at ' .. bridge)
    end),
    ':SessionInstallBridge pi installs the bridge and says where',
    messages.list
  )
  H.check(
    st.last.install and st.last.install.path == bridge and st.last.install.written == true,
    'the server wrote it',
    st.last.install
  )

  -- The agent's dialogs: declared, and answered through vim.ui in the handler's coroutine.
  local caps = require('sessiontree.client').capabilities()
  H.check(caps.experimental.sessionTree.agentDialogs == true, 'the client declares agentDialogs')
  local dialogs = require('sessiontree.dialogs')
  vim.ui.select = function(items, _, on_choice)
    vim.schedule(function()
      on_choice(items[2])
    end)
  end
  local answer
  coroutine.wrap(function()
    answer = dialogs.answer({ uri = uri, dialog = 'select', title = 'Pick', options = { 'red', 'green' } })
  end)()
  H.check(
    H.wait(function()
      return answer ~= nil
    end),
    'a select dialog waits for the choice'
  )
  H.check(vim.deep_equal(answer, { value = 'green' }), 'and answers it', answer)
  coroutine.wrap(function()
    answer = dialogs.answer({ uri = uri, dialog = 'confirm', title = 'Sure?' })
  end)()
  H.check(
    H.wait(function()
      return answer and answer.confirmed == false
    end),
    'a confirm dialog answers yes or no',
    answer
  )
  vim.ui.input = function(_, on_confirm)
    on_confirm(nil)
  end
  answer = nil
  coroutine.wrap(function()
    answer = dialogs.answer({ uri = uri, dialog = 'input', title = 'Name?' })
  end)()
  H.check(vim.deep_equal(answer, { cancelled = true }), 'a dismissed input is cancelled', answer)
  H.check(
    vim.deep_equal(dialogs.answer({ uri = uri, dialog = 'select', title = 'x', options = {} }), { cancelled = true }),
    'outside a coroutine a dialog is cancelled at once'
  )
end)
