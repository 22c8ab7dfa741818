-- Completion in the prompt window: `/` from the plugin's own commands and
-- gopi's (templates, skills, extension commands), `@` for files under the
-- working directory, `#` for what the editor holds (#buffer, #diff, ...).
-- Also the arguments of :GopiModel and :GopiThinking.
-- Through 'completefunc' (<C-x><C-u>), and as items for nvim-cmp or
-- blink.cmp sources (see :help gopi-completion).
local M = {}

--- gopi's prompt templates, skills and extension commands (get_commands).
---@type gopi.SlashCommand[]
M.commands = {}

--- The plugin's own slash commands, run in the editor (gopi.slash), listed
--- before gopi's.
M.builtins = {
  { name = "help", description = "gopi.nvim: the slash commands" },
  { name = "new", description = "gopi.nvim: a new session" },
  { name = "resume", description = "gopi.nvim: resume one of this directory's sessions" },
  { name = "sessions", description = "gopi.nvim: resume one of this directory's sessions" },
  { name = "fork", description = "gopi.nvim: a new session from an earlier message" },
  { name = "clone", description = "gopi.nvim: go on in a copy of the session" },
  { name = "rename", description = "gopi.nvim: name the session" },
  { name = "model", description = "gopi.nvim: switch the model" },
  { name = "thinking", description = "gopi.nvim: set or cycle the thinking level" },
  { name = "compact", description = "gopi.nvim: summarise older messages" },
  { name = "export", description = "gopi.nvim: export the session to HTML" },
  { name = "changes", description = "gopi.nvim: the last run's changed files" },
  { name = "rewind", description = "gopi.nvim: back to a checkpoint (undo: take it back)" },
  { name = "abort", description = "gopi.nvim: stop the run" },
  { name = "restart", description = "gopi.nvim: restart gopi on the same session" },
  { name = "log", description = "gopi.nvim: the plugin's log" },
  { name = "mcp", description = "gopi.nvim: the MCP servers, their state and tools" },
}

M.thinking_levels = { "off", "minimal", "low", "medium", "high", "xhigh" }

--- The models gopi offers (provider/id), as last asked.
M.models = {}

--- :GopiModel's argument: the models of the running gopi (asked once, briefly).
function M.model_args(lead)
  local c = require("gopi.chat").current():running()
  if #M.models == 0 and c then
    local res = c:call("get_available_models", {}, 2000)
    for _, m in ipairs((res or {}).models or {}) do
      table.insert(M.models, m.provider .. "/" .. m.id)
    end
  end
  return vim.tbl_filter(function(m)
    return vim.startswith(m, lead or "") or vim.startswith(m:gsub("^[^/]*/", ""), lead or "")
  end, M.models)
end

--- :GopiThinking's argument.
function M.thinking_args(lead)
  return vim.tbl_filter(function(l)
    return vim.startswith(l, lead or "")
  end, M.thinking_levels)
end

--- Asks gopi c (gopi.client) for its commands.
function M.load_commands(c)
  c:request("get_commands", {}, function(err, res)
    if not err and res then
      M.commands = res.commands or {}
    end
  end)
end

--- Files under cwd whose path contains query, shortest first.
function M.files(query, limit)
  local out = {}
  local cwd = vim.fn.getcwd()
  local ok, found = pcall(vim.fs.find, function(name, path)
    local rel = (path .. "/" .. name):sub(#cwd + 2)
    return rel:find(query, 1, true) ~= nil and not rel:find("/.git/", 1, true) and not rel:match("^%.git/")
  end, { path = cwd, type = "file", limit = limit or 50 })
  if ok then
    for _, p in ipairs(found) do
      table.insert(out, p:sub(#cwd + 2))
    end
  end
  table.sort(out, function(a, b)
    return #a < #b or (#a == #b and a < b)
  end)
  return out
end

--- Items for the word before the cursor: {word, menu}.
function M.items(before)
  local slash = before:match("^/(%S*)$")
  if slash then
    local items, seen = {}, {}
    for _, c in ipairs(vim.list_extend(vim.deepcopy(M.builtins), M.commands)) do
      if vim.startswith(c.name, slash) and not seen[c.name] then
        seen[c.name] = true
        table.insert(items, { word = "/" .. c.name, menu = c.description or "" })
      end
    end
    return items, 0
  end
  -- #buffer, #diagnostics, ... (gopi.context), at a word's start.
  local hash = before:match("^#([%w:]*)$") or before:match("%s#([%w:]*)$")
  if hash then
    local items = {}
    for _, m in ipairs(require("gopi.context").mentions) do
      if vim.startswith(m.name, hash) then
        table.insert(items, { word = "#" .. m.name, menu = m.description })
      end
    end
    return items, #before - #hash - 1
  end
  local at = before:match("@([^%s@]*)$")
  if at then
    local items = {}
    for _, f in ipairs(M.files(at, 30)) do
      table.insert(items, { word = "@" .. f, menu = "file" })
    end
    return items, #before - #at - 1
  end
  return {}, #before
end

-- Where the word being completed starts, as the first call found it.
local start_col = 0

function M.completefunc(findstart, base)
  local line = vim.api.nvim_get_current_line()
  local col = vim.api.nvim_win_get_cursor(0)[2]
  if findstart == 1 then
    local _, start = M.items(line:sub(1, col))
    start_col = start
    return start
  end
  -- Neovim has taken base out of the line for this call: what is left of
  -- where it started, and base, make the text to complete.
  return (M.items(line:sub(1, start_col) .. base))
end

return M
