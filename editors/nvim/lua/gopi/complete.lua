-- Completion in the prompt window: `/` from gopi's commands (templates,
-- skills, extension commands), `@` for files under the working directory.
-- Through 'completefunc' (<C-x><C-u>), and as items for nvim-cmp or
-- blink.cmp sources (see :help gopi-completion).
local M = {}

M.commands = {}

function M.load_commands()
  local chat = require("gopi.chat")
  local c = chat.session.client
  if not c then
    return
  end
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
    local items = {}
    for _, c in ipairs(M.commands) do
      if vim.startswith(c.name, slash) then
        table.insert(items, { word = "/" .. c.name, menu = c.description or "" })
      end
    end
    return items, 0
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

function M.completefunc(findstart, base)
  local line = vim.api.nvim_get_current_line()
  local col = vim.api.nvim_win_get_cursor(0)[2]
  local before = line:sub(1, col)
  if findstart == 1 then
    local _, start = M.items(before)
    return start
  end
  local items = M.items(before:sub(1, col - #base) .. base)
  return items
end

return M
