-- The chat as the live agent's front end, for real: the real pi and omp (scripts/install-agents.sh)
-- answer through the real server against the tests' loopback model server. For each agent: <CR>
-- in the chat input sends to the agent; the answer streams into the buffer (drawn before it ends),
-- then the finished text replaces it; thinking is folded and <CR> opens it; the new messages are
-- rows of the tree and hang under the leaf; :SessionStop aborts an answer the model holds; <CR> on
-- an old question in the panel, the text edited and sent: the agent answers from exactly there
-- (the question under the old one's parent, the model given only the context up to it); a pi
-- extension's dialog is answered through vim.ui.select; pi exiting (an extension's /crash) is said
-- with its last stderr lines and the next prompt starts a new pi.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')
local A = H.agents()

--- The answer streamed slowly enough to be seen before it ends.
local LONG = 'The answer streams in small pieces, one after another, until the very last word arrives here.'
local RULES = {
  -- After a tool's result, the model closes the turn (the rules below would call the tool again).
  { when = { lastToolResult = '' }, reply = { text = 'done: the file is written.' } },
  {
    when = { lastUser = '^Stream' },
    reply = { thinking = 'Counting the words first.', text = LONG, chunk = 6, delayMs = 120 },
  },
  { when = { lastUser = '^Hold' }, reply = { text = 'Holding this answer for a while', hold = true, chunk = 4 } },
  {
    when = { lastUser = '^Write' },
    reply = {
      text = 'Writing it.',
      toolCalls = { { name = 'write', arguments = { path = 'hello.txt', content = 'hello\n' } } },
    },
  },
}

---@param agent 'pi'|'omp'
---@param file string
---@param model sessiontree.test.ModelServer
local function chat_with(agent, file, model)
  local chat = require('sessiontree.chat')
  local panel = require('sessiontree.panel')
  local st = chat.state
  H.out('## ' .. agent)
  H.check(H.show(file, 20000), agent .. ': the session opens in the panel')
  vim.cmd('SessionChat')
  H.check(
    H.wait(function()
      return st.conversation.status ~= nil and H.chat_text():find('echo: first question', 1, true)
    end, 20000),
    agent .. ': the chat shows the conversation and learns the agent state',
    { status = st.conversation.status, text = H.chat_text() }
  )
  H.check(
    st.conversation.status and st.conversation.status.agent == agent and st.conversation.status.state ~= 'unavailable',
    agent .. ': the state is the session agent, available',
    st.conversation.status
  )
  H.check(
    vim.wo[st.input_win].winbar:find('<CR> sends to ' .. agent, 1, true) ~= nil,
    agent .. ': the input says <CR> sends to the agent',
    vim.wo[st.input_win].winbar
  )
  local leaf_before = panel.state.leaf

  -- Send: the answer streams into the buffer, then the finished text replaces it.
  H.send('Stream the answer, please')
  local partial
  H.check(
    H.wait(function()
      local text = H.chat_text()
      if
        text:find('streaming…', 1, true)
        and text:find('The answer', 1, true)
        and not text:find('very last word', 1, true)
      then
        partial = text
        return true
      end
    end, 120000),
    agent .. ': part of the answer is drawn while it streams (before the end)',
    H.chat_text()
  )
  H.check(
    H.wait(function()
      local text = H.chat_text()
      return text:find(LONG, 1, true) and not text:find('streaming…', 1, true) and not st.conversation.running
    end, 90000),
    agent .. ': the whole answer is drawn when it ends, in place of the stream',
    H.chat_text()
  )
  H.check(
    partial ~= nil and not partial:find(LONG, 1, true),
    agent .. ': the partial drawing held less than the answer'
  )
  H.check(
    st.stream and st.stream.deltas > 1 and st.stream.streamed == LONG and st.stream.final == LONG,
    agent .. ': several deltas arrived; joined they equal the final text',
    st.stream
  )
  H.check(chat.input_text() == '', agent .. ': the input is cleared once the agent took the prompt', chat.input_text())
  -- Thinking is folded; <CR> on it opens it.
  local thinking = H.chat_line('▸ thinking')
  H.check(thinking ~= nil, agent .. ': the thinking is drawn as one line', H.chat_text())
  if thinking then
    vim.api.nvim_set_current_win(st.conv_win)
    H.check(vim.fn.foldclosed(thinking) == thinking, agent .. ': the thinking is folded')
    vim.api.nvim_win_set_cursor(st.conv_win, { thinking, 0 })
    H.feed('<CR>')
    H.check(vim.fn.foldclosed(thinking) == -1, agent .. ': <CR> opens it')
    H.check(
      (vim.api.nvim_buf_get_lines(st.conv_buf, thinking, thinking + 1, false)[1] or ''):find(
        'Counting the words first.',
        1,
        true
      ) ~= nil,
      agent .. ': the thinking text is under it'
    )
  end
  -- The tree: the new messages are rows, under the leaf the editor showed.
  local reply, user = A.answer_to(file, '^Stream the answer')
  H.check(
    user and user.parentId == leaf_before,
    agent .. ': the new user message hangs under the leaf',
    { user = user, leaf = leaf_before }
  )
  H.check(
    H.wait(function()
      local lines = table.concat(H.panel_lines(), '\n')
      return reply
        and panel.state.leaf == reply.id
        and lines:find('Stream the answer', 1, true)
        and lines:find('The answer streams', 1, true)
    end, 20000),
    agent .. ': the question and the answer are rows of the tree; the answer is the leaf',
    H.panel_lines()
  )

  -- Stop: an answer the model holds is aborted.
  H.send('Hold on to it')
  H.check(
    H.wait(function()
      return H.chat_text():find('Hold', 1, true)
        and st.conversation.running
        and H.chat_text():find('streaming…', 1, true)
    end, 90000),
    agent .. ': the held answer starts streaming',
    H.chat_text()
  )
  H.check(
    vim.wo[st.conv_win].winbar:find('answering', 1, true) ~= nil,
    agent .. ': the winbar says the agent is answering',
    vim.wo[st.conv_win].winbar
  )
  vim.cmd('SessionStop')
  H.check(
    H.wait(function()
      return st.last.abort and st.last.abort.aborted == true
    end, 30000),
    agent .. ': :SessionStop aborts the answer',
    st.last
  )
  H.check(
    H.wait(function()
      return not st.conversation.running and not H.chat_text():find('streaming…', 1, true)
    end, 60000),
    agent .. ': the stream ends; the chat is idle again',
    { running = st.conversation.running, text = H.chat_text() }
  )
  H.check(
    H.wait(function()
      local answer = A.answer_to(file, '^Hold on to it')
      return answer and answer.message and answer.message.stopReason == 'aborted'
    end, 30000),
    agent .. ': the file keeps the aborted answer, as the agent writes it'
  )
  H.check(
    H.wait(function()
      return vim.wo[st.conv_win].winbar:find('idle', 1, true) ~= nil
    end, 30000),
    agent .. ': the winbar says idle',
    vim.wo[st.conv_win].winbar
  )

  -- From an old message: <CR> on the first question's row in the panel moves the leaf to its parent
  -- (through the agent) and fills the input with its text; the edited text sent from there hangs
  -- under that parent, and the model is given exactly the context up to it.
  local again = 'Stream it once more, from there'
  -- (First the panel has the aborted answer as its leaf and the server's revision: a move asked
  -- for an older revision of the session is refused as "changed meanwhile".)
  H.check(
    H.wait(function()
      local answer = A.answer_to(file, '^Hold on to it')
      local _, now = H.server_lines()
      return answer
        and panel.state.leaf == answer.id
        and panel.state.pending == 0
        and panel.state.revision == now.revision
    end, 30000),
    agent .. ": the aborted answer is the leaf of the tree, drawn at the server's revision",
    panel.state.leaf
  )
  H.check(H.goto_row(user and user.id), agent .. ": the cursor is on the old question's row")
  H.feed('<CR>')
  H.check(
    H.wait(function()
      return panel.state.leaf == leaf_before and chat.input_text() == 'Stream the answer, please'
    end, 30000),
    agent .. ': <CR> on an old question moves the leaf to its parent and fills the input with its text',
    { leaf = panel.state.leaf, want = leaf_before, input = chat.input_text() }
  )
  local requests_before = #A.requests(model)
  H.send(again)
  H.check(
    H.wait(function()
      local text = H.chat_text()
      return text:find(LONG, 1, true)
        and not text:find('streaming…', 1, true)
        and not st.conversation.running
        and A.message(file, '^Stream it once more') ~= nil
    end, 120000),
    agent .. ': the agent answers the edited question',
    H.chat_text()
  )
  local retry = A.message(file, '^Stream it once more')
  H.check(
    retry and retry.parentId == leaf_before,
    agent .. ": the edited question hangs under the old question's parent",
    { retry = retry, want = leaf_before }
  )
  --- What a request gave the model: its user and assistant messages, as text.
  local function context_of(request)
    local said = {}
    for _, m in ipairs(request and request.messages or {}) do
      local c = m.content
      if type(c) == 'table' then
        c = table.concat(
          vim.tbl_map(function(p)
            return type(p) == 'table' and p.text or ''
          end, c),
          ''
        )
      end
      if m.role == 'user' or m.role == 'assistant' then
        -- (omp puts the date and the working directory before the first user message's text.)
        c = tostring(c or ''):gsub('^<system%-reminder>.-</system%-reminder>', '')
        table.insert(said, m.role .. ': ' .. c)
      end
    end
    return said
  end
  -- The request that carried the edited question: the newest one ending with it (the agent may
  -- ask the model something else after it, e.g. about the aborted turn).
  local requests = A.requests(model)
  local said_to_model = context_of(requests[#requests])
  for i = #requests, requests_before + 1, -1 do
    local said = context_of(requests[i])
    if said[#said] == 'user: ' .. again then
      said_to_model = said
      break
    end
  end
  H.check(
    #requests > requests_before
      and vim.deep_equal(
        said_to_model,
        { 'user: first question', 'assistant: echo: first question', 'user: ' .. again }
      ),
    agent .. ': the model was given exactly the context up to that point (the later branch left out)',
    said_to_model
  )
  H.check(
    H.wait(function()
      local reply2 = A.answer_to(file, '^Stream it once more')
      return reply2 and panel.state.leaf == reply2.id
    end, 20000),
    agent .. ': the new answer is the leaf of the tree'
  )
  local asked = #A.requests(model)
  return asked
end

H.run(function()
  local live = A.start(RULES)
  -- A pi extension of the user's whose command asks something (an agent's dialog).
  vim.fn.mkdir(live.home .. '/.pi/agent/extensions', 'p')
  vim.fn.writefile({
    'export default function (pi: any) {',
    '  pi.registerCommand("ask", {',
    '    description: "Ask for a colour",',
    '    handler: async (_args: string, ctx: any) => {',
    '      const choice = await ctx.ui.select("Pick a colour", ["red", "green"]);',
    '      ctx.ui.notify(`picked ${choice}`, "info");',
    '    },',
    '  });',
    '  pi.registerCommand("crash", {',
    '    description: "Stop pi with a message on stderr",',
    '    handler: async () => {',
    '      process.stderr.write("crash: the extension stops pi here\\n");',
    '      process.exit(3);',
    '    },',
    '  });',
    '}',
  }, live.home .. '/.pi/agent/extensions/ask.ts')
  local pi_file = A.first_session(live, 'pi', 'first question')
  local omp_file = A.first_session(live, 'omp', 'first question')
  A.setup(live)
  local messages = H.messages()

  chat_with('pi', pi_file, live.model)

  -- An extension inside pi asks (its /ask command opens a select dialog): the question comes to
  -- vim.ui.select, the answer goes back to the extension, which says what it got.
  local chat = require('sessiontree.chat')
  local st = chat.state
  local asked
  vim.ui.select = function(items, opts, on_choice)
    asked = { items = items, prompt = opts.prompt }
    vim.schedule(function()
      on_choice(items[2])
    end)
  end
  H.send('/ask')
  H.check(
    H.wait(function()
      -- (The notice comes while the command runs, before pi answers the prompt that ran it; the
      -- next send waits for that answer.)
      return H.chat_text():find('> picked green', 1, true) ~= nil and not st.sending
    end, 90000),
    "pi: an extension's select dialog is answered through vim.ui.select; its notice is shown",
    { asked = asked, text = H.chat_text(), last = st.last }
  )
  H.check(
    asked and vim.deep_equal(asked.items, { 'red', 'green' }) and asked.prompt:find('Pick a colour', 1, true),
    'pi: the dialog showed the extension title and choices',
    asked
  )

  -- The agent exits (the extension's /crash writes a line to stderr and exits): the chat says so
  -- with its last stderr lines, the state is exited, and the next prompt starts a new agent.
  local pid = st.conversation.status and st.conversation.status.pid
  H.send('/crash')
  H.check(
    H.wait(function()
      return messages.said('the agent exited') and messages.said('crash: the extension stops pi here')
    end, 60000),
    'pi: the agent exited: said with its last stderr lines',
    messages.texts()
  )
  H.check(
    H.wait(function()
      return st.conversation.status and st.conversation.status.state == 'exited'
    end, 30000),
    'pi: the state is exited',
    st.conversation.status
  )
  H.check(
    H.wait(function()
      return vim.wo[st.conv_win].winbar:find('exited', 1, true) ~= nil
    end, 10000),
    'pi: the winbar says exited',
    vim.wo[st.conv_win].winbar
  )
  H.send('Stream after the exit')
  H.check(
    H.wait(function()
      local a = A.answer_to(pi_file, '^Stream after the exit')
      return a and not st.conversation.running
    end, 120000),
    'pi: the next prompt starts a new agent, which answers',
    H.chat_text()
  )
  H.check(
    st.conversation.status and st.conversation.status.pid ~= nil and st.conversation.status.pid ~= pid,
    'pi: a new process',
    { before = pid, now = st.conversation.status }
  )

  chat_with('omp', omp_file, live.model)

  -- A tool call and its result: one line each, folded; <CR> shows the arguments.
  H.send('Write hello.txt')
  H.check(
    H.wait(function()
      return H.chat_line('⚙ write')
        and H.chat_line('↳ ')
        and not st.conversation.running
        and H.chat_text():find('done: the file is written.', 1, true)
    end, 90000),
    'omp: the tool call and its result are drawn, then the answer',
    H.chat_text()
  )
  local call = H.chat_line('⚙ write')
  if call then
    vim.api.nvim_set_current_win(st.conv_win)
    H.check(vim.fn.foldclosed(call) == call, 'the tool call is one folded line', H.chat_text())
    vim.api.nvim_win_set_cursor(st.conv_win, { call, 0 })
    H.feed('<CR>')
    H.check(
      vim.fn.foldclosed(call) == -1
        and table
          .concat(vim.api.nvim_buf_get_lines(st.conv_buf, call, call + 6, false), '\n')
          :find('"path": "hello.txt"', 1, true),
      '<CR> shows its arguments',
      vim.api.nvim_buf_get_lines(st.conv_buf, call - 1, call + 6, false)
    )
  end
  H.check(vim.fn.filereadable(live.project .. '/hello.txt') == 1, 'the agent ran its own tool in the project')

  pcall(function()
    require('sessiontree.client').stop(true)
  end)
  A.stop(live.model)
  H.check(not messages.said('ERROR'), 'no error was shown', messages.texts())
end)
