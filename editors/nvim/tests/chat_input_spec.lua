-- The chat input belongs to its session, against the real server: the text /branch puts into the
-- fork's input stays with the fork; back in the source session the input is the source's own
-- (empty) and <CR> sends nothing into it; back in the fork the text is there again, and sending it
-- writes it into the fork only.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')

H.run(function()
  -- No live agent: Send appends without an answer, so anything sent shows in the file.
  H.start({ ['c06.jsonl'] = H.fixture('c06-branch-basic/omp/session.jsonl') })
  local panel = require('sessiontree.panel')
  local chat = require('sessiontree.chat')
  local messages = H.messages()
  local c06 = H.session('c06.jsonl')
  H.show(c06)
  local source = panel.state.uri
  vim.cmd('SessionChat')
  H.check(
    H.wait(function()
      return H.chat_on(source)
    end, 10000),
    'the chat shows the source session'
  )

  -- /branch from "Rome": the fork opens with "Rome" in its input.
  local _, err, result = H.answer(function(done)
    require('sessiontree.actions').branch('6c055220', done)
  end, 10000)
  H.check(
    H.wait(function()
      return result and H.chat_on(result.newUri) and chat.input_text() == 'Rome'
    end, 10000),
    '/branch: the fork is shown with "Rome" in its input',
    { err = err, result = result, input = chat.input_text() }
  )
  local fork = result and result.newUri
  if not fork then
    return
  end
  local fork_path = vim.uri_to_fname(fork)

  -- Back to the source: its own input, not the fork's text; <CR> sends nothing into it.
  local size = vim.fn.getfsize(c06)
  H.show(c06)
  H.check(
    H.wait(function()
      return H.chat_on(source)
    end, 10000),
    'the chat follows the panel back to the source'
  )
  H.check(chat.input_text() == '', "the source's input is its own (empty), not the fork's text", chat.input_text())
  messages.clear()
  H.send()
  H.wait(function()
    return messages.said('nothing to send')
  end)
  H.check(
    vim.fn.getfsize(c06) == size and chat.state.last.append == nil and chat.state.last.prompt == nil,
    'nothing was sent into the source',
    { size = { size, vim.fn.getfsize(c06) }, last = chat.state.last, said = messages.texts() }
  )

  -- Back in the fork: its text is there again, and sending it writes it there.
  H.show(fork_path)
  H.check(
    H.wait(function()
      return H.chat_on(fork) and chat.input_text() == 'Rome'
    end, 10000),
    'back in the fork, its input holds its text again',
    chat.input_text()
  )
  local fork_size = vim.fn.getfsize(fork_path)
  H.send()
  H.check(
    H.wait(function()
      return chat.state.last.append and chat.state.last.append.text == 'Rome' and chat.input_text() == ''
    end, 10000),
    'sent from the fork: appended there, the input cleared',
    chat.state.last
  )
  H.check(vim.fn.getfsize(fork_path) > fork_size and vim.fn.getfsize(c06) == size, 'the fork grew, the source did not')
end)
