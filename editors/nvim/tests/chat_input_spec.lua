-- The chat input belongs to its session, against the real server: the text /branch puts into the
-- fork's input stays with the fork; back in the source session the input is the source's own
-- (empty) and <CR> sends nothing into it; back in the fork the text is there again, and sending it
-- writes it into the fork only.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')

H.run(function()
  local conf = H.conformance_dir()
  local dir = H.workspace({ ['c06.jsonl'] = conf .. '/c06-branch-basic/omp/session.jsonl' })
  -- No live agent: Send appends without an answer, so anything sent shows in the file.
  H.setup(dir)
  vim.cmd('runtime plugin/sessiontree.lua')
  local panel = require('sessiontree.panel')
  local chat = require('sessiontree.chat')
  local c06 = dir .. '/sessions/c06.jsonl'
  local function show(path)
    H.redraw_after(function()
      vim.cmd('SessionTree ' .. path)
    end, 10000)
  end
  local function chat_on(uri)
    return chat.state.conversation.uri ~= nil and panel.same_uri(chat.state.conversation.uri, uri)
  end
  show(c06)
  local source = panel.state.uri
  vim.cmd('SessionChat')
  H.check(H.wait(function()
    return chat_on(source)
  end, 10000), 'the chat shows the source session')

  -- /branch from "Rome": the fork opens with "Rome" in its input.
  local branched
  require('sessiontree.actions').branch('6c055220', function(err, result)
    branched = { err = err, result = result }
  end)
  H.check(
    H.wait(function()
      return branched and branched.result and chat_on(branched.result.newUri) and chat.input_text() == 'Rome'
    end, 10000),
    '/branch: the fork is shown with "Rome" in its input',
    { branched = branched, input = chat.input_text() }
  )
  local fork = branched and branched.result and branched.result.newUri
  if not fork then
    return
  end
  local fork_path = vim.uri_to_fname(fork)

  -- Back to the source: its own input, not the fork's text; <CR> sends nothing into it.
  local size = vim.fn.getfsize(c06)
  show(c06)
  H.check(H.wait(function()
    return chat_on(source)
  end, 10000), 'the chat follows the panel back to the source')
  H.check(chat.input_text() == '', "the source's input is its own (empty), not the fork's text", chat.input_text())
  vim.api.nvim_set_current_win(chat.state.input_win)
  H.feed('<CR>')
  vim.wait(1000)
  H.check(
    vim.fn.getfsize(c06) == size and chat.state.last.append == nil and chat.state.last.prompt == nil,
    'nothing was sent into the source',
    { size = { size, vim.fn.getfsize(c06) }, last = chat.state.last }
  )

  -- Back in the fork: its text is there again, and sending it writes it there.
  show(fork_path)
  H.check(
    H.wait(function()
      return chat_on(fork) and chat.input_text() == 'Rome'
    end, 10000),
    "back in the fork, its input holds its text again",
    chat.input_text()
  )
  local fork_size = vim.fn.getfsize(fork_path)
  vim.api.nvim_set_current_win(chat.state.input_win)
  H.feed('<CR>')
  H.check(
    H.wait(function()
      return chat.state.last.append and chat.state.last.append.text == 'Rome' and chat.input_text() == ''
    end, 10000),
    'sent from the fork: appended there, the input cleared',
    chat.state.last
  )
  H.check(vim.fn.getfsize(fork_path) > fork_size and vim.fn.getfsize(c06) == size, 'the fork grew, the source did not')
end)
