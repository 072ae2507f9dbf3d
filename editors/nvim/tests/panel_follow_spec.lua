-- The panel keeps up with a session that changes in bursts, against the real server: every
-- sessionTree/didChange for the shown session asks for rows at once, or, when rows are already
-- on their way, once more as soon as those are answered (no fixed delay, so the last change of a
-- burst is drawn one answer after it arrived); never more than one rows request is in flight; the
-- rows go out before the chat's transcript of the same change (the server answers a session's
-- requests in order); when the panel is idle again it shows the revision the last didChange
-- announced, which is the server's. First with another process appending a burst of lines (and a change arriving while
-- the user's own refresh is on its way), then with the real pi and omp streaming an answer from
-- the tests' model server: when the answer ends the panel shows the server's revision, having
-- drawn the tree a few times per written entry, not once per streamed piece. In between, with the
-- chat open, an answer's end played with its change in each order (the end 1 ms first, the change
-- first, the end while the chat's read is on its way): one transcript read, after the rows.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:gsub('^@', ''), ':p:h') .. '/support/helpers.lua')
local A = H.agents()
local client = require('sessiontree.client')
local protocol = require('sessiontree.protocol')

--- The answer, streamed in many small pieces.
local LONG = 'The answer streams in small pieces, one after another, until the very last word arrives here.'
local RULES = {
  { when = { lastUser = '^Stream' }, reply = { text = LONG, chunk = 4, delayMs = 40 } },
}

--- What the panel did on each didChange of its session. `before` runs ahead of the panel's
--- listener (registered before the plugin loads), the other one after it.
---@type { revision: integer, asked: boolean, owed: boolean, pending: integer, at: integer, sent: integer, shown: integer|nil }[]
local changes = {}
local seq_before = 0
--- The requests the plugin sent, by method, in order; and how many there were when the change
--- being handled arrived.
---@type string[]
local sent = {}
local sent_before = 0
---@type fun(p: table)|nil
local on_change = nil
--- Runs once right after the plugin's next request went out.
---@type fun(method: string)|nil
local after_send = nil
client.on(protocol.DID_CHANGE, function(p)
  local loaded = package.loaded['sessiontree.panel']
  seq_before = loaded and loaded.state.seq or 0
  sent_before = #sent
  if on_change then
    on_change(p)
  end
end)
-- The chat loads before the panel (as when :SessionChat is the first command), so its listener
-- of didChange runs before the panel's: the rows must go out first all the same.
require('sessiontree.chat')

--- Checks how the panel answered the didChanges recorded from `first` on.
---@param first integer
---@param what string
local function check_changes(first, what)
  local late, max_pending = {}, 0
  for i = first, #changes do
    local c = changes[i]
    if not (c.asked or c.owed) then
      table.insert(late, { revision = c.revision, pending = c.pending })
    end
    max_pending = math.max(max_pending, c.pending)
  end
  H.check(#changes >= first, what .. ': didChanges arrived', #changes - first + 1)
  H.check(
    #late == 0,
    what .. ': each didChange asked for rows at once, or once more when those on their way are answered',
    late
  )
  H.check(max_pending <= 1, what .. ': never more than one rows request in flight', max_pending)
end

--- Checks that after each didChange from `first` on, the panel's rows went out before the chat's
--- transcript (the server answers one session's requests in order: the tree must not wait behind
--- a long conversation).
---@param first integer
---@param what string
local function check_rows_first(first, what)
  local behind = {}
  for i = first, #changes do
    local c = changes[i]
    for k = c.sent + 1, #sent do
      if sent[k] == protocol.ROWS then
        break
      elseif sent[k] == protocol.TRANSCRIPT then
        table.insert(behind, { revision = c.revision, sent = vim.list_slice(sent, c.sent + 1, k) })
        break
      end
    end
  end
  H.check(#behind == 0, what .. ": after each didChange the panel's rows went out before the chat's transcript", behind)
end

--- Waits until the panel is idle and shows the last announced revision; checks it is the
--- server's; prints how long the panel took from the last didChange.
---@param panel table
---@param what string
local function check_caught_up(panel, what)
  local st = panel.state
  local last = changes[#changes]
  local caught = H.wait(function()
    return panel.idle() and last and st.revision == last.revision
  end, 10000)
  H.check(caught, what .. ': idle again, the panel shows the revision of the last didChange', {
    shown = st.revision,
    announced = last and last.revision,
    pending = st.pending,
    dirty = st.dirty,
  })
  local _, now = H.server_lines()
  H.check(st.revision == now.revision, what .. ": which is the server's revision", {
    shown = st.revision,
    server = now.revision,
  })
  if last and last.shown then
    H.out(
      string.format('  note  %s: last didChange → panel at its revision: %.1f ms', what, (last.shown - last.at) / 1e6)
    )
  end
end

H.run(function()
  local live = A.start(RULES)
  local pi_file = A.first_session(live, 'pi', 'first question')
  local omp_file = A.first_session(live, 'omp', 'first question')
  vim.fn.writefile(vim.fn.readfile(H.fixture('c06-branch-basic/omp/session.jsonl'), 'b'), H.session('c06.jsonl'), 'b')
  A.setup(live)
  local panel = require('sessiontree.panel')
  local chat = require('sessiontree.chat')
  local st = panel.state
  client.on(protocol.DID_CHANGE, function(p)
    if not (panel.is_open() and panel.same_uri(p.uri, st.uri)) then
      return
    end
    table.insert(changes, {
      revision = p.revision,
      asked = st.seq > seq_before,
      owed = st.pending > 0 and st.dirty == true,
      pending = st.pending,
      at = vim.uv.hrtime(),
      sent = sent_before,
    })
  end)
  local request = client.request
  local answered = {}
  client.request = function(method, params, handler)
    table.insert(sent, method)
    local id = request(method, params, function(err, result)
      answered[method] = (answered[method] or 0) + 1
      return handler(err, result)
    end)
    if after_send then
      local fn = after_send
      after_send = nil
      fn(method)
    end
    return id
  end
  -- When the panel first showed the last change's revision (for the note; nothing waits on it).
  local watch = assert(vim.uv.new_timer())
  watch:start(
    1,
    1,
    vim.schedule_wrap(function()
      local last = changes[#changes]
      if last and not last.shown and st.revision == last.revision then
        last.shown = vim.uv.hrtime()
      end
    end)
  )
  H.cleanup(function()
    watch:stop()
    watch:close()
  end)

  -- Another process appends a burst of lines, one every few milliseconds.
  local c06 = H.session('c06.jsonl')
  H.check(H.show(c06), 'the session opens in the panel')
  local parent = st.leaf
  for i = 1, 12 do
    local id = string.format('b0057%03d', i)
    H.append_entry(c06, {
      type = 'message',
      id = id,
      parentId = parent,
      timestamp = string.format('2025-01-01T00:%02d:00.000Z', i),
      message = { role = 'user', content = 'burst ' .. i, timestamp = 1735689600000 + i * 60000 },
    })
    parent = id
    vim.wait(8)
  end
  H.check(
    H.wait(function()
      return H.row(parent) ~= nil
    end, 10000),
    'burst: the last appended line is a row'
  )
  check_changes(1, 'burst')
  check_caught_up(panel, 'burst')

  -- A change arriving while rows are on their way (the user's own refresh, sent just before it):
  -- one more request goes out as soon as that answer is drawn.
  local first = #changes + 1
  local seq_after_user = nil
  on_change = function()
    on_change = nil
    panel.refresh()
    seq_after_user = st.seq
  end
  H.append_entry(c06, {
    type = 'message',
    id = 'b0057999',
    parentId = parent,
    timestamp = '2025-01-01T01:00:00.000Z',
    message = { role = 'user', content = 'while rows are on their way', timestamp = 1735693200000 },
  })
  H.check(
    H.wait(function()
      return seq_after_user ~= nil and panel.idle() and H.row('b0057999') ~= nil
    end, 10000),
    'in flight: the change arrived while rows were on their way, and is drawn'
  )
  H.check(changes[first] and changes[first].owed, 'in flight: the panel owed one more request', changes[first])
  H.check(
    seq_after_user ~= nil and st.seq == seq_after_user + 1,
    'in flight: exactly one more rows request was sent after the answer on its way',
    { after_user = seq_after_user, now = st.seq }
  )
  check_caught_up(panel, 'in flight')

  -- The chat open on the session: when the agent's answer ends, it reads the transcript once, and
  -- after the panel's rows. The end and the didChange of the answer's last entry come in either
  -- order (the server relays the end as it reads the file), or the end comes while the chat's
  -- read of an earlier change is on its way. These didChanges and agentEnds are played to the
  -- plugin's handlers (a revision the chat has not read), so each order is certain.
  vim.cmd('SessionChat')
  local function chat_settled()
    return panel.idle() and (chat.reads_idle == nil or chat.reads_idle())
  end
  H.check(
    H.wait(function()
      return chat.state.revision == st.revision and chat_settled()
    end, 10000),
    "ends: the chat is open at the panel's revision",
    { chat = chat.state.revision, panel = st.revision }
  )
  local played = 0
  for _, order in ipairs({ 'end 1 ms before the change', 'change, then end', 'end while the read is on its way' }) do
    played = played + 1
    local from = #sent
    local read_before = answered[protocol.TRANSCRIPT] or 0
    local change = { uri = st.uri, revision = (chat.state.revision or 0) + 1000 * played, leaf = st.leaf }
    local ended = { uri = chat.state.conversation.uri, event = { kind = 'agentEnd' } }
    local changes_before = #changes
    if order == 'end 1 ms before the change' then
      client.handlers[protocol.AGENT_EVENT](nil, ended)
      local t = assert(vim.uv.new_timer())
      t:start(
        1,
        0,
        vim.schedule_wrap(function()
          t:close()
          client.handlers[protocol.DID_CHANGE](nil, change)
        end)
      )
    elseif order == 'change, then end' then
      client.handlers[protocol.DID_CHANGE](nil, change)
      client.handlers[protocol.AGENT_EVENT](nil, ended)
    else
      -- The end comes right after the chat's read went out (the panel's rows go before it).
      local function end_after_read(method)
        if method == protocol.TRANSCRIPT then
          client.handlers[protocol.AGENT_EVENT](nil, ended)
        else
          after_send = end_after_read
        end
      end
      after_send = end_after_read
      client.handlers[protocol.DID_CHANGE](nil, change)
    end
    H.check(H.wait(function()
      return (answered[protocol.TRANSCRIPT] or 0) > read_before and chat_settled()
    end, 10000) and H.settle() and H.settle(), order .. ': the chat read the transcript and is settled')
    after_send = nil
    local asked = vim.list_slice(sent, from + 1, #sent)
    local reads, first_read, first_rows = 0, nil, nil
    for k, m in ipairs(asked) do
      if m == protocol.TRANSCRIPT then
        reads = reads + 1
        first_read = first_read or k
      elseif m == protocol.ROWS then
        first_rows = first_rows or k
      end
    end
    H.check(reads == 1, order .. ': one transcript read for the answer end and its change', asked)
    H.check(
      first_rows ~= nil and first_read ~= nil and first_rows < first_read,
      order .. ": the panel's rows went out before the chat's transcript",
      asked
    )
    -- These didChanges were played, not the server's: the checks of the panel's pace skip them.
    for i = #changes, changes_before + 1, -1 do
      table.remove(changes, i)
    end
  end
  H.check(H.chat_text() ~= '', 'ends: the chat shows the conversation', H.chat_text())

  -- The live agent streams an answer: when it ends, the panel shows the server's revision.
  -- What had been sent, and how many didChanges had come, when the live answer ended.
  local end_seen = nil
  client.on(protocol.AGENT_EVENT, function(p)
    if p.event and p.event.kind == 'agentEnd' and p.uri == chat.state.conversation.uri then
      end_seen = end_seen or { sent = #sent, changes = #changes }
    end
  end)
  for _, run in ipairs({ { 'pi', pi_file }, { 'omp', omp_file } }) do
    local agent, file = run[1], run[2]
    H.check(H.show(file, 20000), agent .. ': the session opens in the panel')
    vim.cmd('SessionChat')
    H.check(
      H.wait(function()
        return chat.state.conversation.status ~= nil
      end, 20000),
      agent .. ': the chat learns the agent state'
    )
    first = #changes + 1
    local draws = st.draws
    end_seen = nil
    H.send('Stream the answer, please')
    H.check(
      H.wait(function()
        return H.chat_text():find(LONG, 1, true)
          and not chat.state.conversation.running
          and A.answer_to(file, '^Stream the answer') ~= nil
      end, 120000),
      agent .. ': the answer streamed and ended',
      H.chat_text()
    )
    check_changes(first, agent)
    check_rows_first(first, agent)
    check_caught_up(panel, agent)
    H.check(H.wait(chat_settled, 10000) and H.settle(), agent .. ': the chat read what it owed')
    local reads_after_end = 0
    for k = (end_seen and end_seen.sent or #sent) + 1, #sent do
      if sent[k] == protocol.TRANSCRIPT then
        reads_after_end = reads_after_end + 1
      end
    end
    local changes_after_end = end_seen and #changes - end_seen.changes or 0
    H.check(
      end_seen ~= nil and reads_after_end <= math.max(1, changes_after_end),
      agent .. ': from the answer end on, one transcript read (more only for more changes)',
      {
        reads = reads_after_end,
        changes = changes_after_end,
        sent = end_seen and vim.list_slice(sent, end_seen.sent + 1),
      }
    )
    local _, server_now = H.server_lines()
    H.check(
      H.chat_text():find(LONG, 1, true) and chat.state.revision == server_now.revision,
      agent .. ": the chat shows the final answer, read at the server's revision",
      { chat = chat.state.revision, server = server_now.revision }
    )
    local reply = A.answer_to(file, '^Stream the answer')
    H.check(reply and st.leaf == reply.id, agent .. ': the answer is the leaf of the tree', { leaf = st.leaf })
    local deltas = chat.state.stream and chat.state.stream.deltas or 0
    local turn_changes = #changes - first + 1
    H.check(
      deltas > 4 and st.draws - draws <= 2 * turn_changes + 1,
      agent .. ': the tree was drawn a few times per written entry, not per streamed piece',
      { deltas = deltas, draws = st.draws - draws, changes = turn_changes }
    )
  end

  pcall(function()
    require('sessiontree.client').stop(true)
  end)
  A.stop(live.model)
end)
