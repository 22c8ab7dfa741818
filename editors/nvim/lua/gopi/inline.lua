-- The inline review (option review = "inline"): gopi's proposed edit or
-- write shown in the file's own buffer, hunk by hunk. The lines it would
-- remove are highlighted in place, the lines it would add are virtual lines
-- below them; nothing is in the buffer until the user accepts a hunk.
--
-- gopi's approval answer is only Allow or Deny: it cannot carry a changed
-- proposal. So:
--   * every hunk accepted: Allow, and gopi writes its own proposal (the
--     buffer, which already holds it, is loaded again from the file);
--   * some hunks accepted: Deny to gopi (the model reads that the call was
--     denied), and the accepted hunks, already in the buffer, are written
--     to the file;
--   * every hunk rejected: Deny, and the buffer and the file stay as they
--     were.
-- Each accepted hunk is one undo step in the buffer.
local M = {}

local config = require("gopi.config")
local uv = vim.uv or vim.loop

local ns = vim.api.nvim_create_namespace("gopi.inline")

-- Its colours, for a colorscheme or the user to set (:help
-- gopi-review-inline); linked again after a :colorscheme clears them.
local function colours()
  vim.api.nvim_set_hl(0, "GopiReviewRemoved", { link = "DiffDelete", default = true })
  vim.api.nvim_set_hl(0, "GopiReviewAdded", { link = "DiffAdd", default = true })
  vim.api.nvim_set_hl(0, "GopiReviewHint", { link = "Comment", default = true })
end
colours()
vim.api.nvim_create_autocmd("ColorScheme", { group = vim.api.nvim_create_augroup("gopi.inline.colours", {}), callback = colours })

local function real(path)
  path = vim.fs.normalize(path)
  return uv.fs_realpath(path) or path
end

-- The file's lines (nil when it cannot be read), as the review tab reads them.
local function read_lines(path)
  local review = require("gopi.review")
  local s = review.read(path)
  return s and review.lines_of(s)
end

--- The hunks between the buffer and the target, each {a0, ca, b0, cb,
--- lnum}: a0/b0 are the 0-based starts of the ranges (ca lines of the
--- buffer become cb lines of the target), lnum the hunk's first line on
--- screen.
local function hunks_of(lines, target)
  local a = #lines > 0 and (table.concat(lines, "\n") .. "\n") or ""
  local b = #target > 0 and (table.concat(target, "\n") .. "\n") or ""
  local out = {}
  for _, h in ipairs(vim.diff(a, b, { result_type = "indices" }) or {}) do
    local sa, ca, sb, cb = h[1], h[2], h[3], h[4]
    local a0 = ca == 0 and sa or sa - 1
    local b0 = cb == 0 and sb or sb - 1
    table.insert(out, { a0 = a0, ca = ca, b0 = b0, cb = cb, lnum = ca > 0 and sa or math.max(sa, 1) })
  end
  return out
end

local function hunk_last(h)
  return h.lnum + math.max(h.ca, 1) - 1
end

--- The keys of an inline review (the first n of them), as one line.
function M.hint(n)
  local k = config.options.keys
  local parts = {}
  for _, it in ipairs({
    { k.accept, "accept hunk" },
    { k.reject, "reject hunk" },
    { k.accept_all, "accept all" },
    { k.reject_all, "reject all" },
    { k.next_hunk, "next" },
    { k.prev_hunk, "previous" },
  }) do
    if it[1] and it[1] ~= "" and #parts < (n or math.huge) then
      table.insert(parts, it[1] .. " " .. it[2])
    end
  end
  return table.concat(parts, " · ")
end

local State = {}
State.__index = State

function State:lines()
  return vim.api.nvim_buf_get_lines(self.buf, 0, -1, false)
end

function State:hunks()
  return hunks_of(self:lines(), self.target)
end

--- Draws the hunks: removed lines highlighted, added ones as virtual lines.
function State:render()
  local b = self.buf
  vim.api.nvim_buf_clear_namespace(b, ns, 0, -1)
  local hunks = self:hunks()
  self.list = hunks
  for i, h in ipairs(hunks) do
    for r = h.a0, h.a0 + h.ca - 1 do
      vim.api.nvim_buf_set_extmark(b, ns, r, 0, { line_hl_group = "GopiReviewRemoved", sign_text = "-", sign_hl_group = "GopiReviewRemoved", priority = 200 })
    end
    local virt = {}
    for j = h.b0 + 1, h.b0 + h.cb do
      table.insert(virt, { { self.target[j] .. string.rep(" ", math.max(vim.o.columns - vim.fn.strdisplaywidth(self.target[j]), 0)), "GopiReviewAdded" } })
    end
    local row, above = h.a0 + h.ca - 1, false
    if h.ca == 0 then
      row = h.a0 - 1
      if row < 0 then
        row, above = 0, true
      end
    end
    local mark = {
      virt_lines = #virt > 0 and virt or nil,
      virt_lines_above = above,
      -- Every key on the first hunk; the others name theirs only.
      virt_text = { { string.format(" gopi %d/%d: %s", i, #hunks, i == 1 and M.hint() or M.hint(2)), "GopiReviewHint" } },
      virt_text_pos = "eol",
    }
    vim.api.nvim_buf_set_extmark(b, ns, row, 0, mark)
  end
  return hunks
end

--- The hunk the keys act on: the one under the cursor, else the next one,
--- else the last.
function State:at_cursor()
  local hunks = self.list or self:hunks()
  local lnum = vim.api.nvim_win_get_cursor(0)[1]
  for _, h in ipairs(hunks) do
    if lnum >= h.lnum and lnum <= hunk_last(h) then
      return h
    end
  end
  for _, h in ipairs(hunks) do
    if h.lnum > lnum then
      return h
    end
  end
  return hunks[#hunks]
end

--- Accepts h: its lines go into the buffer, one undo step.
function State:accept(h)
  local added = vim.list_slice(self.target, h.b0 + 1, h.b0 + h.cb)
  -- A new undo step for this hunk (setting 'undolevels' ends the last one).
  vim.bo[self.buf].undolevels = vim.bo[self.buf].undolevels
  self.applying = true
  vim.api.nvim_buf_set_lines(self.buf, h.a0, h.a0 + h.ca, false, added)
  self.applying = false
  self.accepted = self.accepted + 1
end

--- Rejects h: the target keeps the buffer's lines there.
function State:reject(h)
  local kept = vim.api.nvim_buf_get_lines(self.buf, h.a0, h.a0 + h.ca, false)
  local t = {}
  vim.list_extend(t, self.target, 1, h.b0)
  vim.list_extend(t, kept)
  vim.list_extend(t, self.target, h.b0 + h.cb + 1, #self.target)
  self.target = t
  self.rejected = self.rejected + 1
end

--- After a decision: the next hunk under the cursor, or the end.
function State:step(lnum)
  local hunks = self:render()
  if #hunks == 0 then
    self:finish()
    return
  end
  local next_one = hunks[#hunks]
  for _, h in ipairs(hunks) do
    if h.lnum >= lnum then
      next_one = h
      break
    end
  end
  self:jump(next_one)
end

function State:jump(h)
  for _, w in ipairs(vim.fn.win_findbuf(self.buf)) do
    if w == vim.api.nvim_get_current_win() then
      vim.api.nvim_win_set_cursor(w, { math.min(h.lnum, vim.api.nvim_buf_line_count(self.buf)), 0 })
    end
  end
end

function State:act(what)
  local hunks = self.list or self:hunks()
  if #hunks == 0 then
    self:finish()
    return
  end
  local lnum = vim.api.nvim_win_get_cursor(0)[1]
  if what == "accept" or what == "reject" then
    local h = self:at_cursor()
    lnum = h.lnum
    self[what](self, h)
  else
    -- Every hunk, last first: the earlier ones keep their places.
    for i = #hunks, 1, -1 do
      self[what == "accept_all" and "accept" or "reject"](self, hunks[i])
    end
  end
  self:step(lnum)
end

--- Every hunk decided: answers gopi (see the top of this file).
function State:finish()
  if self.closed then
    return
  end
  local lines = self:lines()
  local disk = read_lines(self.path) or {}
  local all = self.rejected == 0 and vim.deep_equal(lines, self.proposed)
  local review = require("gopi.review")
  local name = self.q.path
  local function say(text, hl)
    vim.api.nvim_echo({ { "gopi: " .. name .. ": " .. text, hl or "Comment" } }, true, {})
  end
  if all and vim.deep_equal(disk, self.current) then
    -- gopi writes the same text; the buffer is loaded again after it.
    vim.bo[self.buf].modified = false
    review.settle(self.q, self.always and "Allow always" or "Allow")
    say("every hunk accepted; gopi writes it")
    M.watch(self.buf, self.path, self.current, self.proposed)
  elseif not vim.deep_equal(disk, self.disk) and not vim.deep_equal(disk, lines) then
    -- Someone else wrote the file meanwhile: nothing is written over it.
    review.settle(self.q, "Deny")
    say("changed on disk during the review: denied, and the buffer is not written", "WarningMsg")
  elseif vim.deep_equal(lines, self.current) and vim.deep_equal(disk, lines) then
    review.settle(self.q, "Deny")
    say("every hunk rejected")
  else
    -- Part of the proposal (or all of it over a file you wrote meanwhile):
    -- gopi cannot take it as an answer, so it is denied and the buffer,
    -- holding what was accepted, is written.
    if not vim.deep_equal(disk, lines) then
      vim.api.nvim_buf_call(self.buf, function()
        vim.cmd("silent keepalt write")
      end)
    end
    review.settle(self.q, "Deny")
    say(string.format("%d hunk(s) accepted and written; gopi was told the edit was denied", #hunks_of(self.current, lines)))
  end
end

--- After an Allow the buffer, marked unmodified, already holds what gopi
--- is to write. Should gopi not write it after all (its edit failed), the
--- buffer would show a text the file does not hold: it is loaded again
--- from the file then, with a warning. (A buffer edited meanwhile is left.)
function M.watch(buf, path, before, after, tries)
  tries = tries or 0
  vim.defer_fn(function()
    if not vim.api.nvim_buf_is_loaded(buf) or vim.bo[buf].modified then
      return
    end
    if not vim.deep_equal(vim.api.nvim_buf_get_lines(buf, 0, -1, false), after) then
      return
    end
    local disk = read_lines(path)
    if vim.deep_equal(disk, before) and tries >= M.watch_tries then
      vim.api.nvim_buf_call(buf, function()
        vim.cmd("silent edit!")
      end)
      vim.api.nvim_echo(
        { { "gopi: " .. vim.fn.fnamemodify(path, ":~:.") .. " was not written by gopi: its buffer shows the file again", "WarningMsg" } },
        true,
        {}
      )
    elseif vim.deep_equal(disk, before) then
      M.watch(buf, path, before, after, tries + 1)
    end
  end, M.watch_ms)
end

--- How long the buffer waits for gopi's write: watch_tries × watch_ms.
M.watch_ms, M.watch_tries = 200, 50

--- Takes the review down: marks, keys, autocommands. The buffer keeps its
--- text and its undo history.
function State:close()
  if self.closed then
    return
  end
  self.closed = true
  if vim.api.nvim_buf_is_valid(self.buf) then
    vim.api.nvim_buf_clear_namespace(self.buf, ns, 0, -1)
    for lhs, old in pairs(self.saved_maps) do
      pcall(vim.keymap.del, "n", lhs, { buffer = self.buf })
      if old ~= false then
        vim.api.nvim_buf_call(self.buf, function()
          pcall(vim.fn.mapset, "n", false, old)
        end)
      end
    end
  end
  pcall(vim.api.nvim_del_augroup_by_id, self.group)
  self.q.inline = nil
end

--- Whether a window shows a file the user edits (not the chat, a float, a
--- help page).
local function plain(w)
  if not vim.api.nvim_win_is_valid(w) or vim.api.nvim_win_get_config(w).relative ~= "" then
    return false
  end
  local b = vim.api.nvim_win_get_buf(w)
  return vim.bo[b].buftype == "" and not vim.b[b].gopi_review
end

--- The window the review goes in: the current one when it shows the file,
--- else one of this tab that shows it, else the previous window (the chat
--- is usually current), else another plain window of this tab; nil when
--- there is none.
local function window_for(full)
  local cur = vim.api.nvim_get_current_win()
  if real(vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(cur))) == full then
    return cur
  end
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if plain(w) and real(vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w))) == full then
      return w
    end
  end
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  if prev ~= 0 and prev ~= cur and plain(prev) then
    return prev
  end
  if plain(cur) then
    return cur
  end
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if plain(w) then
      return w
    end
  end
end

--- Opens q inline, in this tab. Returns false with a reason when it cannot
--- (a new file, a proposal not computed here, a buffer with unsaved
--- changes, no window for it): then the diff tab shows it.
function M.open(q, current_text, proposed_text)
  if q.inline and not q.inline.closed then
    local st = q.inline
    local w = vim.fn.win_findbuf(st.buf)[1]
    if w then
      vim.api.nvim_set_current_win(w)
    else
      local win = window_for(st.path)
      if not win then
        return false, "no window to show it in"
      end
      vim.api.nvim_set_current_win(win)
      vim.api.nvim_win_set_buf(win, st.buf)
    end
    if st.list and st.list[1] then
      st:jump(st:at_cursor())
    end
    return true
  end
  if not current_text then
    return false, "a new file"
  end
  if not proposed_text then
    return false, "gopi's diff could not be applied here"
  end
  local full = real(q.full)
  local split = function(s)
    local l = vim.split(s, "\n", { plain = true })
    if l[#l] == "" then
      table.remove(l)
    end
    return l
  end
  local current, proposed = split(current_text), split(proposed_text)
  local existing = vim.fn.bufnr(full)
  if existing ~= -1 and vim.api.nvim_buf_is_loaded(existing) and vim.bo[existing].modified then
    return false, "its buffer has unsaved changes"
  end
  local win = window_for(full)
  if not win then
    return false, "no window to show it in"
  end
  vim.api.nvim_set_current_win(win)
  if real(vim.api.nvim_buf_get_name(0)) ~= full then
    local ok, err = pcall(vim.cmd, "edit " .. vim.fn.fnameescape(full))
    if not ok then
      return false, tostring(err)
    end
  end
  local buf = vim.api.nvim_get_current_buf()
  if not vim.deep_equal(vim.api.nvim_buf_get_lines(buf, 0, -1, false), current) then
    return false, "its buffer differs from the file"
  end
  local st = setmetatable({
    q = q,
    buf = buf,
    path = full,
    current = current,
    -- The file as the review knows it: as it opened, or as the user wrote it.
    disk = current,
    proposed = proposed,
    target = vim.deepcopy(proposed),
    accepted = 0,
    rejected = 0,
    saved_maps = {},
  }, State)
  q.inline = st
  st.group = vim.api.nvim_create_augroup("gopi.inline." .. buf, { clear = true })
  -- Edits of the user's own redraw the hunks against what is there now.
  vim.api.nvim_create_autocmd({ "TextChanged", "TextChangedI" }, {
    group = st.group,
    buffer = buf,
    callback = function()
      if not st.applying and not st.closed then
        if #st:render() == 0 then
          st:finish()
        end
      end
    end,
  })
  vim.api.nvim_create_autocmd("BufWritePost", {
    group = st.group,
    buffer = buf,
    callback = function()
      st.disk = st:lines()
    end,
  })
  -- The buffer unloaded: the question waits again, to be opened anew.
  vim.api.nvim_create_autocmd({ "BufUnload", "BufWipeout" }, {
    group = st.group,
    buffer = buf,
    callback = function()
      st:close()
    end,
  })
  local keys = config.options.keys
  local function map(lhs, fn, desc)
    if lhs and lhs ~= "" then
      local old = vim.fn.maparg(lhs, "n", false, true)
      st.saved_maps[lhs] = (old.buffer == 1) and old or false
      vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, desc = "gopi: " .. desc })
    end
  end
  map(keys.accept, function()
    st:act("accept")
  end, "accept this hunk")
  map(keys.reject, function()
    st:act("reject")
  end, "reject this hunk")
  map(keys.accept_all, function()
    st:act("accept_all")
  end, "accept every hunk left")
  map(keys.reject_all, function()
    st:act("reject_all")
  end, "reject every hunk left")
  map(keys.allow_always, function()
    st.always = true
    st:act("accept_all")
  end, "accept every hunk left and allow this tool from now on")
  map(keys.next_hunk, function()
    M.move(st, 1)
  end, "next hunk")
  map(keys.prev_hunk, function()
    M.move(st, -1)
  end, "previous hunk")
  map(keys.help, function()
    require("gopi.help").show("inline")
  end, "list the keys")
  local hunks = st:render()
  if #hunks == 0 then
    -- Nothing would change: it is all "accepted".
    st:finish()
    return true
  end
  st:jump(hunks[1])
  return true
end

--- ]x / [x: the next or previous hunk (wrapping around).
function M.move(st, dir)
  local hunks = st.list or st:hunks()
  if #hunks == 0 then
    return
  end
  local lnum = vim.api.nvim_win_get_cursor(0)[1]
  local pick
  if dir > 0 then
    for _, h in ipairs(hunks) do
      if h.lnum > lnum then
        pick = h
        break
      end
    end
    pick = pick or hunks[1]
  else
    for i = #hunks, 1, -1 do
      if hunks[i].lnum < lnum then
        pick = hunks[i]
        break
      end
    end
    pick = pick or hunks[#hunks]
  end
  st:jump(pick)
end

return M
