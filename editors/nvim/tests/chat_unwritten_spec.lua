-- A message is never reported as sent when it is not on disk, with the real pi installed: /branch
-- from the first user message of a pi session gives a session pi writes only with its first
-- assistant reply, which the server holds in memory. :SessionAppend (without the agent) there is
-- refused with the reason (the message would live only in memory), and so is <CR> (the live agent
-- starts on the session's file, which does not exist: pi would start a session of its own there);
-- the text stays in the input, nothing is written, the model is not asked.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')
local A = dofile(H.plugin_dir .. '/tests/support/agents.lua')

H.run(function()
  local dir = H.workspace({})
  local bin = A.bin(H.repo)
  local model = A.model_server(H.repo, dir, {})
  local env = A.home(H.repo, dir, model, bin)
  local source_file = A.first_session(bin, 'pi', env.project, dir .. '/sessions', 'first question')
  H.setup(dir, { agent = { pi_path = bin .. '/pi', omp_path = bin .. '/omp' } })
  vim.cmd('runtime plugin/sessiontree.lua')
  local panel = require('sessiontree.panel')
  local chat = require('sessiontree.chat')
  local st = chat.state
  local messages = {}
  local notify = vim.notify
  vim.notify = function(msg, level)
    table.insert(messages, msg)
    notify(msg, level)
  end
  H.redraw_after(function()
    vim.cmd('SessionTree ' .. source_file)
  end, 15000)
  vim.cmd('SessionChat')
  local nodes = H.ask(require('sessiontree.protocol').TREE, { uri = panel.state.uri, offset = 0, limit = 0 }).nodes
  local first_user
  for _, n in ipairs(nodes) do
    if n.kind == 'message' and n.role == 'user' then
      first_user = first_user or n
    end
  end
  local branched
  require('sessiontree.actions').branch(first_user.id, function(err, result)
    branched = { err = err, result = result }
  end)
  H.check(
    H.wait(function()
      return branched ~= nil and branched.result ~= nil and chat.input_text() == 'first question'
    end, 15000),
    'pi: /branch from the first user message: a new session, the text in its input',
    { branched = branched, input = chat.input_text() }
  )
  local result = branched and branched.result or {}
  H.check(result.written == false and result.newPath and vim.fn.filereadable(result.newPath) == 0, 'pi: the new session is not on disk yet', result)
  local fork_path = result.newPath or ''
  H.check(
    H.wait(function()
      return st.conversation.uri ~= nil and panel.same_uri(st.conversation.uri, result.newUri) and st.conversation.status ~= nil
    end, 15000),
    'the chat is on the new session'
  )

  -- Appending without the agent would leave the message only in memory: refused, the text kept.
  chat.append()
  H.check(
    st.last.append and st.last.append.notOnDisk == true and chat.input_text() == 'first question',
    ':SessionAppend in a session not on disk: not appended, the text stays in the input',
    { last = st.last, input = chat.input_text() }
  )
  H.check(vim.fn.filereadable(fork_path) == 0, 'nothing was written')
  H.check(
    table.concat(messages, '\n'):find('not on disk yet', 1, true) ~= nil,
    'the user is told why (not on disk yet, pi writes it with its first reply)',
    messages
  )

  -- <CR> (Send to the real pi): the live agent can only continue a session on disk (pi, finding
  -- no file, would start a session of its own there): not sent, said so, the text kept.
  local asked = #A.requests(model)
  vim.api.nvim_set_current_win(st.input_win)
  H.feed('<CR>')
  H.check(
    st.last.prompt and st.last.prompt.notOnDisk == true and chat.input_text() == 'first question',
    '<CR> in a session not on disk: not sent, the text stays in the input',
    { last = st.last, input = chat.input_text() }
  )
  H.check(
    table.concat(messages, '\n'):find('not sent: this new session is not on disk yet', 1, true) ~= nil,
    'the user is told it was not sent and why',
    messages
  )
  vim.wait(1000)
  H.check(#A.requests(model) == asked and vim.fn.filereadable(fork_path) == 0, 'the model was not asked, nothing was written')
  local conv = table.concat(vim.api.nvim_buf_get_lines(st.conv_buf, 0, -1, false), '\n')
  H.check(conv:find('not on disk yet', 1, true) ~= nil, 'the chat shows the notice', conv)
  A.stop(model)
end)
