-- A pi session not on disk yet, with the real pi installed: /branch from the first user message
-- of a pi session gives a session pi writes only with its first assistant reply, which the server
-- holds in memory. :SessionAppend (without the agent) there is refused with the reason (the
-- message would live only in memory), the text stays in the input and nothing is written. <CR>
-- sends to pi, as pi's own fork does: the model gets exactly the new session's context (not the
-- exchange it was branched from), pi writes the session's file with its answer, the input is
-- cleared and the answer is drawn.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')
local A = H.agents()

H.run(function()
  local live = A.start({})
  local source_file = A.first_session(live, 'pi', 'first question')
  A.setup(live)
  local panel = require('sessiontree.panel')
  local chat = require('sessiontree.chat')
  local st = chat.state
  local messages = H.messages()
  H.show(source_file, 15000)
  vim.cmd('SessionChat')
  local first_user = H.first_user_message(panel.state.uri)
  local _, err, result = H.answer(function(done)
    require('sessiontree.actions').branch(first_user.id, done)
  end, 15000)
  H.check(
    H.wait(function()
      return result ~= nil and chat.input_text() == 'first question'
    end, 15000),
    'pi: /branch from the first user message: a new session, the text in its input',
    { err = err, result = result, input = chat.input_text() }
  )
  result = result or {}
  H.check(
    result.written == false and result.newPath and vim.fn.filereadable(result.newPath) == 0,
    'pi: the new session is not on disk yet',
    result
  )
  local fork_path = result.newPath or ''
  H.check(
    H.wait(function()
      return H.chat_on(result.newUri) and st.conversation.status ~= nil
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
    messages.said('not on disk yet'),
    'the user is told why (not on disk yet, pi writes it with its first reply)',
    messages.texts()
  )

  -- <CR> (Send to the real pi): pi takes the session as it is held and writes it with its answer.
  local asked = #A.requests(live.model)
  H.send()
  H.check(
    H.wait(function()
      return vim.fn.filereadable(fork_path) == 1
        and H.chat_text():find('echo: first question', 1, true) ~= nil
        and not st.conversation.running
    end, 90000),
    '<CR> in a session not on disk: pi answers, its file is written, the answer is drawn',
    { last = st.last, text = H.chat_text() }
  )
  local requests = A.requests(live.model)
  local users = {}
  for _, m in ipairs((requests[#requests] or {}).messages or {}) do
    if m.role == 'user' then
      local text = m.content
      if type(text) == 'table' then
        text = table.concat(
          vim.tbl_map(function(p)
            return p.text or ''
          end, text),
          ''
        )
      end
      table.insert(users, text)
    end
  end
  H.check(
    #requests == asked + 1 and vim.deep_equal(users, { 'first question' }),
    "the model was asked once, with the new session's context only",
    { asked = asked, requests = #requests, users = users }
  )
  local lines = vim.fn.filereadable(fork_path) == 1 and vim.fn.readfile(fork_path) or {}
  local header = lines[1] and vim.json.decode(lines[1]) or {}
  H.check(
    header.type == 'session'
      and header.id == result.sessionId
      and header.parentSession ~= nil
      and vim.fn.resolve(header.parentSession) == vim.fn.resolve(source_file),
    "pi wrote the session's own header (its id, its parent) first",
    lines
  )
  H.check(chat.input_text() == '', 'the input is cleared once pi took the message', chat.input_text())
end)
