-- Branch summaries with a real model provider, from Neovim: a small OpenAI-compatible server on 127.0.0.1
-- runs inside this Neovim (libuv TCP), the real server's `openai` provider calls it. First a summary that never
-- finishes is cancelled with <C-c> in the panel: the leaf stays, the file is byte-identical, and the server closed
-- its connection to the model. Then "Summarize" with a model that answers writes one `branch_summary` line at the
-- new position.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')

local uv = vim.uv or vim.loop

--- One server-sent event with a content delta.
---@param text string
---@return string
local function event(text)
  return 'data: {"choices":[{"index":0,"delta":{"content":"' .. text .. '"},"finish_reason":null}]}\n\n'
end

local SSE_HEAD = 'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n'
  .. 'cache-control: no-cache\r\nconnection: close\r\n\r\n'

--- A model server: `srv.mode` is 'hang' (one delta, then nothing until the client goes away) or 'stream' (a
--- whole summary). Counts requests and notes a client that hung up before the answer ended.
local function model_server()
  local srv = { mode = 'hang', requests = 0, closed_early = false }
  local listener = assert(uv.new_tcp())
  assert(listener:bind('127.0.0.1', 0))
  assert(listener:listen(16, function(err)
    if err then
      return
    end
    local sock = assert(uv.new_tcp())
    listener:accept(sock)
    local buf, mode = '', nil
    sock:read_start(function(rerr, chunk)
      if rerr or not chunk then
        -- The client closed the connection: before the answer ended when it was a hanging one.
        if mode == 'hang' then
          srv.closed_early = true
        end
        if not sock:is_closing() then
          sock:close()
        end
        return
      end
      buf = buf .. chunk
      local head_end = buf:find('\r\n\r\n', 1, true)
      if mode or not head_end then
        return
      end
      local len = tonumber(buf:sub(1, head_end):lower():match('content%-length:%s*(%d+)')) or 0
      if #buf < head_end + 3 + len then
        return
      end
      mode = srv.mode
      srv.requests = srv.requests + 1
      srv.last_body = buf:sub(head_end + 4, head_end + 3 + len)
      if mode == 'hang' then
        sock:write(SSE_HEAD .. event('Starting'))
      else
        sock:write(SSE_HEAD .. event('Tried the ') .. event('museum branch.'))
        sock:write('data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n')
        sock:shutdown(function()
          if not sock:is_closing() then
            sock:close()
          end
        end)
      end
    end)
  end))
  srv.port = listener:getsockname().port
  H.cleanup(function()
    listener:close()
  end)
  return srv
end

H.run(function()
  local srv = model_server()
  H.start({ ['c06.jsonl'] = H.fixture('c06-branch-basic/omp/session.jsonl') }, {
    init_options = {
      branchSummary = {
        enabled = true,
        provider = 'openai',
        openai = { baseUrl = 'http://127.0.0.1:' .. srv.port .. '/v1', model = 'test-model', timeoutSeconds = 60 },
      },
    },
  })
  local c06 = H.session('c06.jsonl')
  local messages = H.messages()
  local said = messages.said

  local panel = require('sessiontree.panel')
  local actions = require('sessiontree.actions')
  local st = panel.state
  H.check(H.show(c06), ':SessionTree {file} drew rows')
  H.check(st.leaf == '662d009f', 'c06 opens at its leaf (662d009f)', st.leaf)
  H.check(
    H.wait(function()
      return actions.summaries_enabled()
    end),
    'the server announces summaries (openai provider in initializationOptions)'
  )
  vim.ui.select = function(items, _, on_choice)
    on_choice(items[2], 2) -- "Summarize"
  end

  -- A model that never finishes: <C-c> cancels the running summary.
  local original = H.read(c06)
  H.check(H.goto_row('c498f61c'), 'row c498f61c (user message "u2") found')
  H.feed('<CR>')
  H.check(
    H.wait(function()
      return srv.requests == 1
    end, 10000),
    'Enter + "Summarize" asked the model server',
    { requests = srv.requests, messages = messages.texts() }
  )
  H.check(
    H.wait(function()
      return actions.pending_navigate ~= nil and st.busy ~= nil and st.busy:find('<C-c> cancels', 1, true)
    end),
    'while the model writes, the navigation is pending and the header says <C-c> cancels',
    st.busy
  )
  local body = srv.last_body and vim.json.decode(srv.last_body) or {}
  H.check(
    body.model == 'test-model' and body.stream == true and #(body.messages or {}) == 2,
    'the request names the model and streams (system + user messages)',
    body.model
  )
  vim.api.nvim_set_current_win(st.win)
  H.feed('<C-c>')
  H.check(
    H.wait(function()
      return said('Navigation cancelled; nothing moved')
    end, 10000),
    '<C-c> in the panel cancelled the running summary',
    messages.texts()
  )
  H.check(actions.pending_navigate == nil and st.busy == nil, 'nothing pending, header not busy', st.busy)
  H.check(st.leaf == '662d009f', 'the leaf stayed at 662d009f', st.leaf)
  H.check(H.read(c06) == original, 'the session file is byte-identical after the cancel')
  H.check(
    H.wait(function()
      return srv.closed_early
    end, 5000),
    'the server closed its connection to the model'
  )
  local tree = H.ask('sessionTree/tree', { uri = st.uri })
  H.check(tree and tree.leaf == '662d009f', 'the server agrees: leaf 662d009f', tree and tree.leaf)

  -- A model that answers: one branch_summary line at the new position.
  srv.mode = 'stream'
  messages.clear()
  H.check(H.goto_row('c498f61c'), 'row c498f61c found again')
  H.feed('<CR>')
  H.check(
    H.wait(function()
      return said('Moved to')
    end, 10000),
    '"Summarize" with a model that answers moved the leaf',
    messages.texts()
  )
  local now = H.read(c06)
  local added = now:sub(#original + 1)
  local lines = vim.split(vim.trim(added), '\n')
  local entry = #lines == 1 and vim.json.decode(lines[1]) or {}
  H.check(
    now:sub(1, #original) == original and #lines == 1 and entry.type == 'branch_summary',
    'exactly one branch_summary line was appended',
    added
  )
  H.check(
    entry.parentId == '42864a3e' and entry.fromId == '42864a3e',
    'the summary hangs at the new position (parent 42864a3e)',
    entry
  )
  H.check(
    type(entry.summary) == 'string' and entry.summary:find('Tried the museum branch.', 1, true) ~= nil,
    "the model's streamed text is the summary",
    entry.summary
  )
  H.check(
    H.wait(function()
      return st.leaf == entry.id
    end),
    'the panel follows: the leaf is the summary entry',
    { leaf = st.leaf, id = entry.id }
  )
  H.check(srv.requests == 2, 'two model requests in all', srv.requests)
end)
