---@brief
--- Every `sessionTree/…` method of the protocol (crate `sessiontree-protocol`, methods.rs), written
--- once for the Lua side. A Rust test checks this list against the catalog, so keep it to method
--- names only: no other strings, no logic.

---@class sessiontree.Protocol
local M = {
  -- client → server requests
  LIST_SESSIONS = 'sessionTree/listSessions',
  OPEN = 'sessionTree/open',
  CLOSE = 'sessionTree/close',
  ROWS = 'sessionTree/rows',
  TREE = 'sessionTree/tree',
  ENTRY = 'sessionTree/entry',
  CONTEXT = 'sessionTree/context',
  NAVIGATE = 'sessionTree/navigate',
  BRANCH = 'sessionTree/branch',
  SET_LABEL = 'sessionTree/setLabel',
  APPEND = 'sessionTree/append',
  SET_NAME = 'sessionTree/setName',
  NAME_FROM_PLAN_TITLE = 'sessionTree/nameFromPlanTitle',
  TRANSCRIPT = 'sessionTree/transcript',
  PROMPT = 'sessionTree/prompt',
  ABORT = 'sessionTree/abort',
  AGENT = 'sessionTree/agent',
  STOP_AGENT = 'sessionTree/stopAgent',
  INSTALL_BRIDGE = 'sessionTree/installBridge',
  -- rewind (code with the conversation)
  REWIND_POINTS = 'sessionTree/rewindPoints',
  REWIND_COMPARE = 'sessionTree/rewindCompare',
  REWIND_FILE = 'sessionTree/rewindFile',
  REWIND_RESTORE = 'sessionTree/rewindRestore',
  REWIND_UNDO = 'sessionTree/rewindUndo',
  DID_RECORD_REWIND_POINT = 'sessionTree/didRecordRewindPoint',
  -- server → client notifications
  DID_CHANGE = 'sessionTree/didChange',
  DID_NAVIGATE = 'sessionTree/didNavigate',
  DID_BRANCH = 'sessionTree/didBranch',
  AGENT_EVENT = 'sessionTree/agentEvent',
  -- server → client requests (hooks, the agent's dialogs)
  BEFORE_TREE = 'sessionTree/beforeTree',
  BEFORE_BRANCH = 'sessionTree/beforeBranch',
  AGENT_DIALOG = 'sessionTree/agentDialog',
}

return M
