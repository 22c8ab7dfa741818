-- gopi's questions. An edit or write to approve opens a diff tab: the file
-- as it is against the file as the tool would leave it; ga or :w accepts,
-- gr or :q rejects, gA allows that tool for the rest of the session. Other
-- questions (bash, extensions' dialogs) go through vim.ui.select, so
-- whatever picker is installed shows them. Each handler runs in the
-- coroutine vim.lsp.rpc gives a server request, and yields until answered.
local M = {}

local config = require("gopi.config")

--- Waits, in the request's coroutine, for done(answer) to be called.
local function await(start)
  local co = coroutine.running()
  assert(co, "gopi: a dialog must run in a coroutine")
  local answered = false
  start(function(value)
    if answered then
      return
    end
    answered = true
    vim.schedule(function()
      coroutine.resume(co, value)
    end)
  end)
  return coroutine.yield()
end

--- edit's replacements applied in order to their first exact match; nil
--- when one does not match (gopi's matching is looser: then gopi's own
--- unified diff is shown).
function M.apply_edits(text, edits)
  local out = text
  for _, e in ipairs(edits or {}) do
    if type(e.oldText) ~= "string" or type(e.newText) ~= "string" or e.oldText == "" then
      return nil
    end
    local s, f = out:find(e.oldText, 1, true)
    if not s then
      return nil
    end
    out = out:sub(1, s - 1) .. e.newText .. out:sub(f + 1)
  end
  return out
end

local function read(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local s = f:read("*a")
  f:close()
  return s
end

local function lines_of(text)
  local lines = vim.split(text, "\n", { plain = true })
  if lines[#lines] == "" then
    table.remove(lines)
  end
  return lines
end

local function scratch(name, lines, ft)
  local b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].buftype = "acwrite"
  vim.bo[b].bufhidden = "wipe"
  vim.bo[b].swapfile = false
  pcall(vim.api.nvim_buf_set_name, b, name)
  if ft and ft ~= "" then
    vim.bo[b].filetype = ft
  end
  vim.bo[b].modified = false
  return b
end

--- The diff tab for an edit or write; returns the chosen action's title.
local function review_change(cwd, p, titles)
  local d = p.details
  local args = d.args or {}
  local path = args.path
  if not path:match("^/") then
    path = cwd .. "/" .. path
  end
  local current = read(path)
  local proposed
  if d.toolName == "write" then
    proposed = args.content
  elseif current then
    proposed = M.apply_edits(current, args.edits)
  end
  local keys = config.options.keys
  local pick = function(want)
    for _, t in ipairs(titles) do
      if t == want then
        return t
      end
    end
  end
  return await(function(done)
    vim.cmd("tabnew")
    local tab = vim.api.nvim_get_current_tabpage()
    local bufs = {}
    local finish = function(title)
      done(title)
      vim.schedule(function()
        if vim.api.nvim_tabpage_is_valid(tab) then
          pcall(vim.cmd, "tabclose " .. vim.api.nvim_tabpage_get_number(tab))
        end
      end)
    end
    local ft = vim.filetype.match({ filename = path }) or ""
    if proposed then
      local left = scratch("gopi://current/" .. path, lines_of(current or ""), ft)
      vim.api.nvim_win_set_buf(0, left)
      vim.bo[left].modifiable = false
      vim.cmd("diffthis")
      vim.cmd("vsplit")
      local right = scratch("gopi://proposed/" .. path, lines_of(proposed), ft)
      vim.api.nvim_win_set_buf(0, right)
      -- Read-only: gopi writes what it proposed, so edits made here would
      -- be lost. To change it, reject and tell gopi what to do instead.
      vim.bo[right].modifiable = false
      vim.cmd("diffthis")
      bufs = { left, right }
      -- :w on the proposal accepts it.
      vim.api.nvim_create_autocmd("BufWriteCmd", {
        buffer = right,
        callback = function()
          vim.bo[right].modified = false
          finish(pick("Allow"))
        end,
      })
    else
      local b = scratch("gopi://diff/" .. path, lines_of(d.diff or "(no diff)"), "diff")
      vim.api.nvim_win_set_buf(0, b)
      bufs = { b }
    end
    vim.api.nvim_echo({ { p.message .. "  ", "Question" }, { string.format("%s accept · %s reject · %s allow always", keys.accept, keys.reject, keys.allow_always), "Comment" } }, false, {})
    for _, b in ipairs(bufs) do
      local map = function(lhs, title)
        vim.keymap.set("n", lhs, function()
          finish(pick(title))
        end, { buffer = b, nowait = true, desc = "gopi: " .. title })
      end
      map(keys.accept, "Allow")
      map(keys.reject, "Deny")
      map(keys.allow_always, "Allow always")
      -- Closing the review (:q) rejects.
      vim.api.nvim_create_autocmd("BufWipeout", {
        buffer = b,
        callback = function()
          finish(pick("Deny"))
        end,
      })
    end
  end)
end

--- window/showMessageRequest: {type, message, actions, details?}.
function M.ask(cwd, p)
  local titles = {}
  for _, a in ipairs(p.actions or {}) do
    table.insert(titles, a.title)
  end
  local d = p.details
  local title
  if d and (d.toolName == "edit" or d.toolName == "write") and type((d.args or {}).path) == "string" then
    title = review_change(cwd, p, titles)
  else
    local prompt = p.message
    if d and d.toolName == "bash" and d.args and d.args.command then
      prompt = p.message .. "\n$ " .. d.args.command
    end
    title = await(function(done)
      vim.ui.select(titles, { prompt = prompt, kind = "gopi" }, function(choice)
        done(choice)
      end)
    end)
  end
  if title == nil then
    return nil -- dismissed: gopi takes it as cancelled
  end
  return { title = title }
end

--- A dialog's answer as pi/ui/input and pi/ui/editor return it.
local function answer(value)
  if value == nil then
    return { cancelled = true }
  end
  return { value = value }
end

--- pi/ui/input: vim.ui.input.
function M.input(p)
  local value = await(function(done)
    vim.ui.input({ prompt = (p.title or "gopi") .. ": ", default = "" }, function(v)
      done(v)
    end)
  end)
  return answer(value)
end

--- pi/ui/editor: a scratch buffer in a new tab; :w submits, closing cancels.
function M.editor(p)
  local value = await(function(done)
    vim.cmd("tabnew")
    local b = scratch("gopi://editor/" .. (p.title or "text"), lines_of(p.prefill or ""), "markdown")
    vim.api.nvim_win_set_buf(0, b)
    vim.api.nvim_echo({ { (p.title or "gopi") .. ": :w submits, :q cancels", "Question" } }, false, {})
    vim.api.nvim_create_autocmd("BufWriteCmd", {
      buffer = b,
      callback = function()
        local text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
        vim.bo[b].modified = false
        done(text)
        vim.schedule(function()
          pcall(vim.cmd, "bwipeout! " .. b)
        end)
      end,
    })
    vim.api.nvim_create_autocmd("BufWipeout", {
      buffer = b,
      callback = function()
        done(nil)
      end,
    })
  end)
  return answer(value)
end

return M
