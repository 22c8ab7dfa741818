-- gopi's questions. The approval gate's (an edit, a write, a bash command)
-- never take the screen or the keyboard: they wait, announced, until the
-- user opens one (:GopiReview). An edit or write opens as a diff tab: the
-- file as it is on the left, as the tool would leave it on the right; ga or
-- :w accepts, gr or :q rejects, gA allows that tool for the rest of the
-- session. With review = "inline" it opens in the file's own buffer
-- instead, hunk by hunk (gopi/inline.lua). A bash command, once opened, and extensions' dialogs go
-- through vim.ui.select, so whatever picker is installed shows them. Each handler
-- runs in the coroutine vim.lsp.rpc gives a server request, and yields
-- until answered.
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

--- The file's bytes; nil when it cannot be read.
function M.read(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local s = f:read("*a")
  f:close()
  return s
end

--- text's lines, without the empty one after a last newline.
function M.lines_of(text)
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

--- A side of a review: its text, not modifiable from the start (so no
--- keystroke can ever land in it), highlighted with the file's syntax only
--- (no FileType: language servers and ftplugins stay away from it).
local function side(name, lines, ft)
  local b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].buftype = "acwrite"
  vim.bo[b].bufhidden = "wipe"
  vim.bo[b].swapfile = false
  vim.bo[b].modifiable = false
  vim.bo[b].modified = false
  pcall(vim.api.nvim_buf_set_name, b, name)
  if ft and ft ~= "" then
    vim.bo[b].syntax = ft
  end
  return b
end

--- The questions gopi's approval gate asked that wait for the user, oldest
--- first. Each is {id, message, titles, details, path?, done}; it stays here
--- until it is answered, or gopi withdraws it ($/cancelRequest: the run was
--- aborted), and only the user opens it (:GopiReview).
M.pending = {}

local function rel(cwd, path)
  local full = path:match("^/") and path or (cwd .. "/" .. path)
  full = vim.fs.normalize(full)
  local root = vim.fs.normalize(cwd)
  if full:sub(1, #root + 1) == root .. "/" then
    return full:sub(#root + 2), full
  end
  return vim.fn.fnamemodify(full, ":~"), full
end

local function is_change(d)
  return d and (d.toolName == "edit" or d.toolName == "write") and type((d.args or {}).path) == "string"
end

--- The keys of a review, as one line of text.
function M.hint()
  local k = config.options.keys
  local parts = {}
  for _, it in ipairs({ { k.accept, "accept" }, { k.reject, "reject" }, { k.allow_always, "allow always" } }) do
    if it[1] and it[1] ~= "" then
      table.insert(parts, it[1] .. " " .. it[2])
    end
  end
  return table.concat(parts, " · ")
end

--- A message on one line (a command's lines joined with ⏎).
function M.oneline(text)
  return (tostring(text or ""):gsub("\r?\n", " ⏎ "))
end

--- What a pending question is about, shortly ("edit a.txt", "bash",
--- "bash outside the sandbox").
function M.label(q)
  local d = q.details or {}
  if q.path then
    return (d.toolName or "change") .. " " .. q.path
  end
  if d.sandboxEscape == true then
    return (d.toolName or "command") .. " outside the sandbox"
  end
  return d.toolName or "question"
end

local function remove(q)
  for i, x in ipairs(M.pending) do
    if x == q then
      table.remove(M.pending, i)
      return true
    end
  end
  return false
end

--- Answers q (title nil: cancelled) and takes its review down.
local function settle(q, title, why)
  if not remove(q) then
    return
  end
  q.done(title)
  if q.inline then
    q.inline:close()
  end
  local tab = q.tab
  q.tab = nil
  if tab then
    vim.schedule(function()
      if vim.api.nvim_tabpage_is_valid(tab) then
        for _, w in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
          local b = vim.api.nvim_win_get_buf(w)
          if vim.b[b].gopi_review then
            vim.b[b].gopi_review = nil
          end
        end
        if #vim.api.nvim_list_tabpages() > 1 then
          pcall(vim.cmd, "tabclose " .. vim.api.nvim_tabpage_get_number(tab))
        end
      end
    end)
  end
  if q.on_change then
    q.on_change(why or "answered", q)
  end
end

local function pick(q, want)
  for _, t in ipairs(q.titles) do
    if t == want then
      return t
    end
  end
end

--- Answers q with the offered title like want (the inline review's way).
function M.settle(q, want, why)
  settle(q, want and pick(q, want) or nil, why)
end

--- Shows a message and keeps it in :messages.
local function say(chunks)
  vim.api.nvim_echo(chunks, true, {})
end

--- The diff tab of an edit or write: the file as it is now on the left, as
--- the tool would leave it on the right.
local function proposal(q)
  local d = q.details
  local args = d.args or {}
  local current = M.read(q.full)
  local proposed
  if d.toolName == "write" then
    proposed = args.content
  elseif current then
    proposed = M.apply_edits(current, args.edits)
  end
  return current, proposed
end

local function open_change(q)
  local d = q.details
  local current, proposed = proposal(q)
  local ft = vim.filetype.match({ filename = q.full }) or ""
  local bufs = {}
  local left, right
  if proposed then
    left = side(q.path .. " (current)", M.lines_of(current or ""), ft)
    right = side(q.path .. " (proposed)", M.lines_of(proposed), ft)
    bufs = { left, right }
  else
    right = side(q.path .. " (gopi's diff)", M.lines_of(d.diff or "(no diff)"), "diff")
    bufs = { right }
  end
  q.shown = { current = current, proposed = proposed and M.lines_of(proposed) or nil, buf = right }
  local wins = {}
  if left then
    vim.cmd("tab sbuffer " .. left)
    wins.left = vim.api.nvim_get_current_win()
    vim.cmd("diffthis")
    vim.cmd("rightbelow vsplit")
    wins.right = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(wins.right, right)
    vim.cmd("diffthis")
  else
    vim.cmd("tab sbuffer " .. right)
    wins.right = vim.api.nvim_get_current_win()
  end
  q.tab = vim.api.nvim_get_current_tabpage()
  local esc = function(s)
    return (s:gsub("%%", "%%%%"))
  end
  if wins.left then
    vim.wo[wins.left].winbar = " " .. esc(q.path) .. " %#Comment#· current%*"
  end
  -- The keys first: a narrow window cuts the path, never them.
  vim.wo[wins.right].winbar = " %#Question#" .. esc(M.hint()) .. "%*  %<" .. esc(q.path) .. " %#Comment#· " .. (left and "proposed" or "gopi's diff") .. "%*"
  for _, b in ipairs(bufs) do
    vim.b[b].gopi_review = true
    local map = function(lhs, title)
      if lhs and lhs ~= "" then
        vim.keymap.set("n", lhs, function()
          M.answer(q, title)
        end, { buffer = b, nowait = true, desc = "gopi: " .. title })
      end
    end
    local keys = config.options.keys
    map(keys.accept, "Allow")
    map(keys.reject, "Deny")
    map(keys.allow_always, "Allow always")
    require("gopi.help").map(b, "review")
    -- :w accepts; closing the review (:q) rejects.
    vim.api.nvim_create_autocmd("BufWriteCmd", {
      buffer = b,
      callback = function()
        vim.bo[b].modified = false
        M.answer(q, "Allow")
      end,
    })
    vim.api.nvim_create_autocmd("BufWipeout", {
      buffer = b,
      callback = function()
        if vim.b[b].gopi_review then
          settle(q, pick(q, "Deny"))
        end
      end,
    })
  end
end

--- Answers a pending question with one of its titles. An accept goes
--- through only when what gopi will write is what the review shows.
function M.answer(q, title)
  if title == "Allow" or title == "Allow always" then
    local s = q.shown
    if s and s.proposed then
      local now = M.read(q.full)
      local lines = vim.api.nvim_buf_is_valid(s.buf) and vim.api.nvim_buf_get_lines(s.buf, 0, -1, false) or nil
      if now ~= s.current or not vim.deep_equal(lines, s.proposed) then
        say({ { "gopi: " .. q.path .. " changed since the review opened; here it is again", "WarningMsg" } })
        M.reopen(q)
        return
      end
    end
  end
  settle(q, pick(q, title))
end

--- Shows q's review again (the file changed meanwhile).
function M.reopen(q)
  local tab = q.tab
  q.tab = nil
  if tab and vim.api.nvim_tabpage_is_valid(tab) then
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
      vim.b[vim.api.nvim_win_get_buf(w)].gopi_review = nil
    end
    pcall(vim.cmd, "tabclose " .. vim.api.nvim_tabpage_get_number(tab))
  end
  M.open(q)
end

--- Opens a pending question for the user (the oldest when q is nil): an
--- edit or write as a diff tab, any other through vim.ui.select. This is
--- the only place a review takes the screen, and only the user calls it.
function M.open(q)
  q = q or M.pending[1]
  if not q then
    say({ { "gopi: no question is waiting", "Comment" } })
    return false
  end
  -- Out of insert mode first: the hint below stays on screen.
  vim.cmd("stopinsert")
  if q.tab and vim.api.nvim_tabpage_is_valid(q.tab) then
    vim.api.nvim_set_current_tabpage(q.tab)
  elseif q.path and (q.inline or config.options.review == "inline") then
    local current, proposed = proposal(q)
    local ok, why = require("gopi.inline").open(q, current, proposed)
    if ok then
      if vim.tbl_contains(M.pending, q) then
        say({ { M.oneline(q.message) .. "  ", "Question" }, { require("gopi.inline").hint(), "Comment" } })
      end
      return true
    end
    say({ { "gopi: " .. q.path .. " cannot be reviewed in its buffer (" .. why .. "): here it is as a diff tab", "Comment" } })
    open_change(q)
  elseif q.path then
    open_change(q)
  else
    local prompt = q.message
    local d = q.details or {}
    -- (The escape question's message names the command already: gopi's
    -- sandbox stopped it, run it once outside? Allow once or Deny.)
    if d.toolName == "bash" and d.args and d.args.command and d.sandboxEscape ~= true then
      prompt = q.message .. "\n$ " .. d.args.command
    end
    if q.asking then
      return true -- its picker is open
    end
    q.asking = true
    vim.ui.select(q.titles, { prompt = prompt, kind = "gopi" }, function(choice)
      q.asking = false
      if choice ~= nil then
        settle(q, choice)
      end
    end)
    return true
  end
  local hint = { { M.oneline(q.message) .. "  ", "Question" }, { M.hint() .. " · :w accepts, :q rejects", "Comment" } }
  if vim.api.nvim_get_mode().mode:match("^i") then
    -- Insert mode ends after this returns, and its end clears the message line.
    vim.api.nvim_create_autocmd("InsertLeave", {
      once = true,
      callback = function()
        vim.schedule(function()
          say(hint)
        end)
      end,
    })
  else
    say(hint)
  end
  return true
end

--- gopi withdrew its request id ($/cancelRequest): the run was aborted or
--- the question timed out.
function M.cancel(id)
  for _, q in ipairs(M.pending) do
    if q.id == id then
      settle(q, nil, "withdrawn")
      return
    end
  end
end

--- gopi went away: nothing waits for an answer any more.
function M.clear()
  for _, q in ipairs(vim.list_slice(M.pending)) do
    settle(q, nil, "withdrawn")
  end
end

--- window/showMessageRequest: {type, message, actions, details?}; id is
--- gopi's id of the request. The approval gate's questions (details name a
--- tool) wait in M.pending, announced, until the user opens and answers
--- them: they never take the keyboard. Other questions (an extension's
--- select or confirm, which the user's own command started) go through
--- vim.ui.select at once. on_change(event, question) is told when one of
--- the approval gate's is asked, answered or withdrawn (the chat that
--- asked announces it and redraws its status).
---@param cwd string
---@param p {type: integer, message: string, actions?: {title: string}[], details?: gopi.ApprovalDetails}
---@param id integer
---@param on_change? fun(event: string, q: table)
function M.ask(cwd, p, id, on_change)
  local titles = {}
  for _, a in ipairs(p.actions or {}) do
    table.insert(titles, a.title)
  end
  local d = p.details
  local title
  if d and type(d.toolName) == "string" then
    local q = { id = id, message = p.message or "", titles = titles, details = d, on_change = on_change }
    if is_change(d) then
      q.path, q.full = rel(cwd, d.args.path)
    end
    title = await(function(done)
      q.done = done
      table.insert(M.pending, q)
      if on_change then
        on_change("asked", q)
      end
    end)
  else
    title = await(function(done)
      vim.ui.select(titles, { prompt = p.message, kind = "gopi" }, function(choice)
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
    local b = scratch("gopi://editor/" .. (p.title or "text"), M.lines_of(p.prefill or ""), "markdown")
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
