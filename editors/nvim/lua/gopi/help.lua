-- The `?` key (keys.help) of the chat, the prompt and the review windows:
-- a float listing the keys as they are configured (a remapped key shows
-- remapped). q, <Esc> or the help key again close it; so does leaving it.
local M = {}

local config = require("gopi.config")

-- What each key of config.keys does, in the order listed, by where it works.
M.known = {
  chat = {
    { "send", "send the message (steers while gopi works)" },
    { "follow_up", "queue the message as a follow-up" },
    { "abort", "stop the run" },
    { "review", "open the question gopi waits on" },
  },
  review = {
    { "accept", "accept the change" },
    { "reject", "reject it" },
    { "allow_always", "accept, and allow this tool for the session" },
  },
  -- review = "inline": the keys act on the hunk under the cursor.
  inline = {
    { "accept", "accept the hunk under the cursor" },
    { "reject", "reject the hunk under the cursor" },
    { "accept_all", "accept every hunk left" },
    { "reject_all", "reject every hunk left" },
    { "allow_always", "accept every hunk left, and allow this tool from now on" },
    { "next_hunk", "the next hunk" },
    { "prev_hunk", "the previous hunk" },
  },
  -- :GopiRewind's preview of a checkpoint.
  rewind = {
    { "rewind_restore", "ask what to restore (the code, the conversation or both)" },
    { "rewind_close", "close the preview" },
  },
}

local mode_names = { n = "normal", i = "insert", v = "visual", x = "visual" }

--- A key of config.keys as text: "ga", or "<CR> (normal), <C-s> (insert)";
--- nil when it is off.
local function show(key)
  if type(key) == "string" then
    return key ~= "" and key or nil
  end
  if type(key) ~= "table" then
    return nil
  end
  local parts = {}
  local modes = vim.tbl_keys(key)
  table.sort(modes, function(a, b)
    return (a == "n" and "" or tostring(a)) < (b == "n" and "" or tostring(b))
  end)
  for _, m in ipairs(modes) do
    local k = key[m]
    if type(k) == "string" and k ~= "" then
      table.insert(parts, string.format("%s (%s)", k, mode_names[m] or tostring(m)))
    end
  end
  return #parts > 0 and table.concat(parts, ", ") or nil
end

--- The lines of the help for where ("chat", "review", "inline" or "rewind"): its keys first,
--- then the other configured keys of gopi (other windows' and any key
--- without a description here), then the commands at hand.
function M.lines(where)
  local keys = config.options.keys or {}
  local out, listed = {}, {}
  local function section(title, items)
    local rows = {}
    for _, it in ipairs(items) do
      listed[it[1]] = true
      local k = it.lit or show(keys[it[1]])
      if k then
        table.insert(rows, { k, it[2] })
      end
    end
    if #rows == 0 then
      return
    end
    table.insert(out, title)
    local w = 0
    for _, r in ipairs(rows) do
      w = math.max(w, vim.api.nvim_strwidth(r[1]))
    end
    for _, r in ipairs(rows) do
      table.insert(out, "  " .. r[1] .. string.rep(" ", w - vim.api.nvim_strwidth(r[1]) + 2) .. r[2])
    end
    table.insert(out, "")
  end
  local review = vim.list_extend(vim.list_slice(M.known.review), {
    { ":w", "accept (a write of the proposal)", lit = ":w" },
    { ":q", "reject (closing the review)", lit = ":q" },
  })
  local sections = {
    chat = { "In the chat and its prompt:", M.known.chat },
    review = { "In a review:", review },
    inline = { "In an inline review (in the file's buffer):", M.known.inline },
    rewind = { "In a rewind's preview (:GopiRewind):", M.known.rewind },
  }
  local order = ({
    review = { "review", "chat", "inline", "rewind" },
    inline = { "inline", "chat", "review", "rewind" },
    rewind = { "rewind", "chat", "review", "inline" },
  })[where] or { "chat", "review", "inline", "rewind" }
  for _, name in ipairs(order) do
    section(sections[name][1], sections[name][2])
  end
  -- Keys set up elsewhere (or added later) are listed by their names.
  local rest = {}
  for name in pairs(keys) do
    if not listed[name] and name ~= "help" then
      table.insert(rest, { name, (name:gsub("_", " ")) })
    end
  end
  table.sort(rest, function(a, b)
    return a[1] < b[1]
  end)
  section("Other keys:", rest)
  local h = show(keys.help)
  table.insert(out, (h and (h .. ", q or <Esc> close this") or "q or <Esc> close this") .. " · :help gopi-keys")
  return out
end

--- Where a float showing lines goes (nvim_open_win's config): in the
--- middle of the editor, as wide as its widest line (at least min_width)
--- and as tall as its lines, within the screen. :GopiMcp's float too.
---@param lines string[]
---@param min_width? integer
function M.centered(lines, min_width)
  local w = 0
  for _, l in ipairs(lines) do
    w = math.max(w, vim.api.nvim_strwidth(l))
  end
  w = math.min(math.max(w + 1, min_width or 0), math.max(vim.o.columns - 4, 10))
  local h = math.min(#lines, math.max(vim.o.lines - 4, 3))
  return {
    relative = "editor",
    row = math.max(math.floor((vim.o.lines - h) / 2) - 1, 0),
    col = math.max(math.floor((vim.o.columns - w) / 2), 0),
    width = w,
    height = h,
  }
end

--- Shows the help of where ("chat", "review", "inline" or "rewind") in a float by the cursor.
function M.show(where)
  local lines = M.lines(where or "chat")
  local b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].modifiable = false
  vim.bo[b].bufhidden = "wipe"
  vim.b[b].gopi_help = where or "chat"
  local win = vim.api.nvim_open_win(b, true, vim.tbl_extend("force", M.centered(lines), { border = "rounded", title = " gopi keys ", style = "minimal" }))
  local close = function()
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_close(win, true)
    end
  end
  for _, k in ipairs({ "q", "<Esc>", config.options.keys.help }) do
    if type(k) == "string" and k ~= "" then
      vim.keymap.set("n", k, close, { buffer = b, nowait = true, desc = "gopi: close the keys" })
    end
  end
  vim.api.nvim_create_autocmd("WinLeave", { buffer = b, once = true, callback = close })
  return win
end

--- Maps the help key (keys.help) in normal mode in buffer b, for where.
function M.map(b, where)
  local k = config.options.keys.help
  if type(k) == "string" and k ~= "" then
    vim.keymap.set("n", k, function()
      M.show(where)
    end, { buffer = b, nowait = true, desc = "gopi: list the keys" })
  end
end

return M
