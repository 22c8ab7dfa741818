-- :GopiRewind: back to one of gopi's checkpoints (docs/checkpoints.md).
-- gopi records the project's files before each prompt's run; this picks
-- one (newest first), shows what restoring it would undo as a diff in a
-- scratch buffer, asks what to restore (the code, the conversation or
-- both) and to confirm, restores, loads again the buffers of the files put
-- back (never one with unsaved changes) and, when the conversation went
-- back, puts its message back in the prompt. `:GopiRewind undo` takes the
-- last rewind back. Everything waits on gopi's answers in callbacks: the
-- editor stays the user's throughout.
local M = {}

local chat = require("gopi.chat")
local config = require("gopi.config")
local sync = require("gopi.sync")

--- How many of the newest checkpoints get their file count in the list
--- (one diff each), and how long the list waits for them (ms) before it
--- shows without the ones still missing.
M.count_max = 10
M.count_wait = 500

--- What the last rewind can be undone with: { id, restore, text }.
M.last = nil

--- The open preview: { buf, cp, files, text }.
M.preview_state = nil

local function request(command, params, cb)
  chat.current():request(command, params, cb)
end

local function note(msg, level)
  chat.current():note(msg, level)
end

local function errtext(err)
  return type(err) == "table" and (err.message or vim.inspect(err)) or tostring(err)
end

local function first_line(s)
  return (vim.trim(s or ""):gsub("\n.*", ""))
end

--- A checkpoint's time (gopi's UTC, RFC 3339) in local time: the time
--- alone today, with the date otherwise.
function M.when(iso, now)
  local y, mo, d, h, mi, s = tostring(iso or ""):match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)")
  if not y then
    return tostring(iso or "")
  end
  now = now or os.time()
  -- os.time reads a date table as local time; the offset between the
  -- local and the UTC reading of now turns it into UTC's.
  local offset = os.difftime(now, os.time(os.date("!*t", now)))
  local t = os.time({ year = tonumber(y), month = tonumber(mo), day = tonumber(d), hour = tonumber(h), min = tonumber(mi), sec = tonumber(s), isdst = false })
    + offset
  if os.date("%Y-%m-%d", t) == os.date("%Y-%m-%d", now) then
    return os.date("%H:%M:%S", t)
  end
  return os.date("%Y-%m-%d %H:%M", t)
end

--- The text of the session's user messages, by entry id (get_entries).
function M.user_texts(entries)
  local out = {}
  for _, e in ipairs(entries or {}) do
    if type(e) == "table" and e.type == "message" and type(e.message) == "table" and e.message.role == "user" then
      local c = e.message.content
      local text = type(c) == "string" and c or ""
      if type(c) == "table" then
        for _, part in ipairs(c) do
          if type(part) == "table" and part.type == "text" and type(part.text) == "string" then
            text = text .. part.text
          end
        end
      end
      out[e.id] = text
    end
  end
  return out
end

local function files_text(n)
  if n == 0 then
    return "no changes"
  end
  return n == 1 and "1 file" or (n .. " files")
end

--- One line of the list: time, what recorded it, its message's first line
--- (or its label), and the number of files restoring it changes when known.
function M.label(cp, text, count, now)
  local desc = first_line(text)
  if cp.label and cp.label ~= "" then
    desc = desc ~= "" and (cp.label .. ": " .. desc) or cp.label
  end
  local out = string.format("%s  %-7s  %s", M.when(cp.createdAt, now), cp.trigger or "", desc ~= "" and desc or "(no message)")
  if count then
    out = out .. "  (" .. files_text(count) .. ")"
  end
  return out
end

local status_text = {
  added = "restoring removes it",
  deleted = "restoring brings it back",
}

--- The preview's lines: a header naming the checkpoint and each file, then
--- the unified diffs (filetype diff).
function M.preview_lines(cp, text, files)
  local desc = first_line(text)
  local lines = { string.format("Rewind to %s (%s)%s", M.when(cp.createdAt), cp.trigger or "", desc ~= "" and (": " .. desc) or "") }
  if cp.label and cp.label ~= "" then
    table.insert(lines, cp.label)
  end
  if cp.note and cp.note ~= "" then
    table.insert(lines, "Note: " .. cp.note)
  end
  if #files == 0 then
    table.insert(lines, "The files are as they were then: restoring the code changes none.")
  else
    table.insert(lines, string.format("Restoring the code undoes what changed since in %s:", files_text(#files)))
  end
  for _, f in ipairs(files) do
    local why = status_text[f.status]
    if f.binary then
      why = why and (why .. ", binary") or "binary"
    end
    table.insert(lines, string.format("  %-9s %s%s", f.status or "", f.path or "", why and ("  (" .. why .. ")") or ""))
  end
  for _, f in ipairs(files) do
    table.insert(lines, "")
    if f.binary or not f.diff or f.diff == "" then
      table.insert(lines, string.format("Binary file %s %s", f.path or "", f.status or "changed"))
    else
      local d = vim.split(f.diff, "\n", { plain = true })
      if d[#d] == "" then
        table.remove(d)
      end
      vim.list_extend(lines, d)
    end
  end
  return lines
end

local function close_preview()
  local st = M.preview_state
  M.preview_state = nil
  if not (st and vim.api.nvim_buf_is_valid(st.buf)) then
    return
  end
  for _, win in ipairs(vim.fn.win_findbuf(st.buf)) do
    -- The last window of the editor cannot close: it shows another buffer.
    if not pcall(vim.api.nvim_win_close, win, true) then
      pcall(vim.api.nvim_win_call, win, function()
        vim.cmd("enew")
      end)
    end
  end
  if vim.api.nvim_buf_is_valid(st.buf) then
    pcall(vim.api.nvim_buf_delete, st.buf, { force = true })
  end
end
M.close_preview = close_preview

--- Shows the preview in a new tab; keys.rewind_restore there asks again,
--- keys.rewind_close closes it.
local function show_preview(cp, text, files)
  close_preview()
  vim.cmd("tabnew")
  local buf = vim.api.nvim_get_current_buf()
  local win = vim.api.nvim_get_current_win()
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  pcall(vim.api.nvim_buf_set_name, buf, "gopi://rewind/" .. cp.id)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, M.preview_lines(cp, text, files))
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = "diff"
  local keys = config.options.keys
  local bar = { "gopi rewind" }
  M.preview_state = { buf = buf, cp = cp, files = files, text = text }
  -- A key set to "" is off.
  for _, k in ipairs({
    { keys.rewind_restore, M.choose, "restore…", "gopi: restore this checkpoint" },
    { keys.rewind_close, close_preview, "close", "gopi: close the rewind preview" },
  }) do
    if type(k[1]) == "string" and k[1] ~= "" then
      vim.keymap.set("n", k[1], function()
        k[2]()
      end, { buffer = buf, desc = k[4] })
      table.insert(bar, k[1]:gsub("%%", "%%%%") .. " " .. k[3])
    end
  end
  vim.wo[win].winbar = table.concat(bar, "  ")
  require("gopi.help").map(buf, "rewind")
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      if M.preview_state and M.preview_state.buf == buf then
        M.preview_state = nil
      end
    end,
  })
end

local choices = {
  { restore = "both", text = "code and conversation" },
  { restore = "code", text = "code only (the files)" },
  { restore = "conversation", text = "conversation only (back to before its message)" },
}

--- Asks what to restore of the previewed checkpoint, then to confirm.
--- Dismissing either leaves the preview open (its key asks again).
function M.choose()
  local st = M.preview_state
  if not st then
    return
  end
  vim.ui.select(choices, {
    prompt = "gopi: rewind what?",
    kind = "gopi.rewind",
    format_item = function(c)
      return c.text
    end,
  }, function(c)
    -- Dismissed: the preview stays, its window bar naming the key that
    -- asks again. (No message: after a list in the message area it would
    -- wait for a key.)
    if not c then
      return
    end
    local desc = first_line(st.text)
    local parts = {}
    if c.restore ~= "conversation" then
      table.insert(parts, #st.files == 0 and "the files (none changed)" or (files_text(#st.files) .. " back"))
    end
    if c.restore ~= "code" then
      table.insert(parts, "the conversation to before " .. (desc ~= "" and ('"' .. desc .. '"') or "its message"))
    end
    vim.ui.select({ "Rewind", "Cancel" }, {
      prompt = "gopi: " .. table.concat(parts, " and ") .. "?",
      kind = "gopi.confirm",
    }, function(yes)
      if yes ~= "Rewind" then
        return
      end
      M.restore(st.cp.id, c.restore, { text = st.text, when = M.when(st.cp.createdAt) })
    end)
  end)
end

--- The prompt's lines and buffer (nil when there is no prompt).
local function prompt_lines()
  local p = chat.current():prompt_buffer()
  if not p then
    return nil
  end
  return vim.api.nvim_buf_get_lines(p, 0, -1, false), p
end

--- Puts text in the prompt: alone when the prompt is empty, else after
--- what is there (nothing typed is lost).
local function to_prompt(text)
  local cur, p = prompt_lines()
  if not cur or not text or text == "" then
    return false
  end
  local add = vim.split(text, "\n", { plain = true })
  if #cur == 1 and cur[1] == "" then
    vim.api.nvim_buf_set_lines(p, 0, -1, false, add)
  else
    vim.api.nvim_buf_set_lines(p, -1, -1, false, vim.list_extend({ "" }, add))
  end
  return true
end

--- Restores checkpoint id (what: "code", "conversation" or "both"), then
--- brings the editor in line: buffers loaded again, the chat shown again,
--- the message back in the prompt. opts.undo: this undoes a rewind.
function M.restore(id, what, opts)
  opts = opts or {}
  if chat.current():is_streaming() then
    return note("gopi is working: a rewind waits until the run ends (or :GopiAbort)", vim.log.levels.WARN)
  end
  request("restore_checkpoint", { checkpointId = id, restore = what }, function(err, r)
    local cwd = chat.current():workdir()
    if err then
      note("rewind: " .. errtext(err), vim.log.levels.ERROR)
      -- Some files may have been put back before it failed.
      sync.reload(nil, "rewind", note)
      return
    end
    r = r or {}
    local files = r.files or {}
    local targets, removed = {}, {}
    for _, f in ipairs(files) do
      local path = sync.resolve(cwd, f.path)
      targets[sync.key(path)] = true
      if f.status == "added" then
        removed[sync.key(path)] = true
      end
    end
    sync.reload(targets, "rewind", note, { always = true })
    -- A buffer whose file the rewind removed keeps its text, and says so.
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      local name = vim.api.nvim_buf_get_name(b)
      if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" and name ~= "" and removed[sync.key(name)] then
        note(vim.fn.fnamemodify(name, ":~:.") .. " was removed by the rewind; its buffer stays", vim.log.levels.WARN)
      end
    end
    local said = {}
    if what ~= "conversation" then
      table.insert(said, #files == 0 and "no file changed" or (#files == 1 and "1 file" or (#files .. " files")))
    end
    if what ~= "code" then
      chat.current():load_history()
      chat.current():refresh_status()
      if not opts.undo then
        -- Its message goes back to the prompt, to be edited and sent again.
        M.placed = to_prompt(r.text) and r.text or nil
        table.insert(said, "the conversation")
      else
        -- The message the rewind put in the prompt, untouched since, goes.
        local cur, p = prompt_lines()
        if cur and M.placed and table.concat(cur, "\n") == M.placed then
          vim.api.nvim_buf_set_lines(p, 0, -1, false, {})
        end
        M.placed = nil
        table.insert(said, "the conversation")
      end
    end
    close_preview()
    if r.undoCheckpointId then
      M.last = { id = r.undoCheckpointId, restore = what }
    elseif not opts.undo then
      M.last = nil
    end
    -- One short line: a longer one would wait for a key.
    local head = opts.undo and "rewind undone" or ("rewound to " .. (opts.when or id))
    local tail = r.undoCheckpointId and (opts.undo and " (:GopiRewind undo rewinds again)" or " (:GopiRewind undo takes it back)") or ""
    note(head .. ": " .. table.concat(said, " and ") .. tail)
  end)
end

--- :GopiRewind undo: restores what the last rewind (or undo) recorded
--- before it changed the files.
function M.undo()
  if not M.last then
    return note("no rewind to undo", vim.log.levels.WARN)
  end
  M.restore(M.last.id, M.last.restore, { undo = true })
end

--- Asks gopi for the checkpoint's diff and shows it, then asks.
function M.preview(cp, text)
  request("diff_checkpoint", { checkpointId = cp.id }, function(err, r)
    if err then
      return note("rewind: " .. errtext(err), vim.log.levels.ERROR)
    end
    show_preview(cp, text, (r or {}).files or {})
    -- The preview on the screen first: the question may cover the editor
    -- (the default vim.ui.select is a list in the message area).
    vim.cmd("redraw")
    vim.schedule(M.choose)
  end)
end

--- :GopiRewind: the session's checkpoints, newest first, to pick from.
--- ask(command, params, on_ok) is the plugin's request (it starts gopi).
function M.open(ask)
  ask("list_checkpoints", {}, function(res)
    local cps = {}
    for _, cp in ipairs((res or {}).checkpoints or {}) do
      table.insert(cps, 1, cp)
    end
    if #cps == 0 then
      return note("no checkpoints in this session yet: gopi records one before each prompt's run")
    end
    local texts, counts, shown = {}, {}, false
    local function show()
      if shown then
        return
      end
      shown = true
      vim.ui.select(cps, {
        prompt = "gopi: rewind to",
        kind = "gopi.checkpoints",
        format_item = function(cp)
          return M.label(cp, texts[cp.entryId], counts[cp.id])
        end,
      }, function(cp)
        if cp then
          M.preview(cp, texts[cp.entryId])
        end
      end)
    end
    -- The messages' text and the newest checkpoints' file counts, for as
    -- long as they come quickly; the list shows with what came.
    local pending = 1 + math.min(#cps, M.count_max)
    local function done()
      pending = pending - 1
      if pending == 0 then
        show()
      end
    end
    request("get_entries", {}, function(err, r)
      if not err then
        texts = M.user_texts((r or {}).entries)
      end
      done()
    end)
    for i = 1, math.min(#cps, M.count_max) do
      request("diff_checkpoint", { checkpointId = cps[i].id }, function(err, r)
        if not err then
          counts[cps[i].id] = #((r or {}).files or {})
        end
        done()
      end)
    end
    vim.defer_fn(show, M.count_wait)
  end)
end

return M
