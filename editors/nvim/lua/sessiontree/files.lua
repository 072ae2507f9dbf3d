---@brief
--- Which files are session files, for attaching the language server only to them: a file under
--- the agents' session folders (omp's and pi's, as configured, plus `extra_roots`), or one whose
--- first line is a session header (after omp's 256-byte title slot). Any other `*.jsonl` (a
--- `data.jsonl` of a project) is left alone.

local config = require('sessiontree.config')

local M = {}

---@param dir string
---@return string the folder, absolute and normalized, with a trailing `/`
local function folder(dir)
  return (vim.fs.normalize(vim.fn.fnamemodify(vim.fn.expand(dir), ':p')):gsub('/*$', '/'))
end

--- The session folders: omp's (`omp_agent_dir`, else `$PI_CODING_AGENT_DIR`, else `~/.omp/agent`)
--- and pi's (`pi_agent_dir`, else `~/.pi/agent`) `sessions/`, and every `extra_roots` folder.
---@return string[]
function M.session_folders()
  local o = config.options
  local omp = o.omp_agent_dir or vim.env.PI_CODING_AGENT_DIR or '~/.omp/agent'
  local pi = o.pi_agent_dir or '~/.pi/agent'
  local out = { folder(omp .. '/sessions'), folder(pi .. '/sessions') }
  for _, root in ipairs(o.extra_roots or {}) do
    table.insert(out, folder(root))
  end
  return out
end

--- Whether `path` lies under a session folder (or any `.omp/agent/sessions` / `.pi/agent/sessions`).
---@param path string absolute
---@return boolean
function M.in_session_folder(path)
  path = vim.fs.normalize(path)
  if path:find('/%.omp/agent/sessions/') or path:find('/%.pi/agent/sessions/') then
    return true
  end
  for _, dir in ipairs(M.session_folders()) do
    if path:sub(1, #dir) == dir then
      return true
    end
  end
  return false
end

--- The `type` of a JSON line, or nil.
---@param line string|nil
---@return string|nil
local function line_type(line)
  if not line or line == '' then
    return nil
  end
  local ok, value = pcall(vim.json.decode, line)
  return ok and type(value) == 'table' and type(value.type) == 'string' and value.type or nil
end

--- Whether the file starts with a session header (omp: after its title slot).
---@param path string
---@return boolean
function M.starts_with_header(path)
  local f = io.open(path, 'rb')
  if not f then
    return false
  end
  -- A header is a short line; a title slot 256 bytes.
  local head = f:read(65536) or ''
  f:close()
  local first, rest = head:match('^([^\n]*)\n?(.*)$')
  local kind = line_type(first)
  if kind == 'title' then
    kind = line_type(rest:match('^([^\n]*)'))
  end
  return kind == 'session'
end

--- Whether `path` is a session file the server should attach to.
---@param path string
---@return boolean
function M.is_session_file(path)
  if path == '' or not path:match('%.jsonl$') then
    return false
  end
  return M.in_session_folder(path) or M.starts_with_header(path)
end

return M
