-- A message is never reported as sent when it is not on disk, with the real pi installed: /branch
-- from the first user message of a pi session gives a session pi writes only with its first
-- assistant reply, which the server holds in memory. :SessionAppend (without the agent) there is
-- refused with the reason (the message would live only in memory), and so is <CR> (the live agent
-- starts on the session's file, which does not exist: pi would start a session of its own there);
-- the text stays in the input, nothing is written, the model is not asked.
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

  -- <CR> (Send to the real pi): the live agent can only continue a session on disk (pi, finding
  -- no file, would start a session of its own there): not sent, said so, the text kept.
  local asked = #A.requests(live.model)
  H.send()
  H.check(
    st.last.prompt and st.last.prompt.notOnDisk == true and chat.input_text() == 'first question',
    '<CR> in a session not on disk: not sent, the text stays in the input',
    { last = st.last, input = chat.input_text() }
  )
  H.check(
    messages.said('not sent: this new session is not on disk yet'),
    'the user is told it was not sent and why',
    messages.texts()
  )
  -- The refusal is the plugin's own, at once; a second's grace for a request that should not
  -- have gone out (there is no event for "nothing happened").
  vim.wait(1000)
  H.check(
    #A.requests(live.model) == asked and vim.fn.filereadable(fork_path) == 0,
    'the model was not asked, nothing was written'
  )
  H.check(H.chat_text():find('not on disk yet', 1, true) ~= nil, 'the chat shows the notice', H.chat_text())
end)
