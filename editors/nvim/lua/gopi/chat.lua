-- The chat: one gopi session, its buffer (markdown, streamed), and a
-- prompt window below it. The session is the plugin's; the windows are per
-- tab page (:Gopi toggles them in the current tab).
local M = {}

local client = require("gopi.client")
local config = require("gopi.config")
local render = require("gopi.render")
local review = require("gopi.review")
local sync = require("gopi.sync")

---@class gopi.Session
---@field client table|nil
---@field buf integer chat buffer
---@field prompt integer prompt buffer
---@field r gopi.Renderer
local S = {
  state = { streaming = false, queue = { steering = {}, followUp = {} }, changed = {}, status = {}, progress = nil },
  widgets = {},
  ext_status = {},
  -- Where following the chat's end last put each window's view.
  views = {},
  log = {},
  -- Images attached for the next prompt (gopi.image), shown under the prompt.
  images = {},
}
M.session = S

local spinner = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" }
local qns = vim.api.nvim_create_namespace("gopi.queue")

local function cwd()
  return vim.fn.getcwd()
end

local function note(msg, level)
  table.insert(S.log, os.date("%H:%M:%S ") .. msg)
  vim.notify("gopi: " .. msg, level or vim.log.levels.INFO)
end
M.note = note

--- note, on one line that fits, with how (what to do about it) after it:
--- a longer message would stop the editor at a hit-enter prompt, which
--- takes the next key typed. The room is v:echospace (the message line
--- beside the ruler and showcmd) less note's "gopi: ".
local function note_line(msg, how, level)
  how = string.format("  (%s)", how)
  local room = math.max(vim.v.echospace - 6 - vim.fn.strdisplaywidth(how), 10)
  msg = review.oneline(msg)
  if vim.fn.strdisplaywidth(msg) > room then
    msg = vim.fn.strcharpart(msg, 0, room - 1) .. "…"
  end
  note(msg .. how, level)
end

--- The chat and prompt buffers, made once.
local function buffers()
  if S.buf and vim.api.nvim_buf_is_valid(S.buf) then
    return
  end
  S.buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(S.buf, "gopi://chat")
  vim.bo[S.buf].filetype = "markdown"
  vim.bo[S.buf].modifiable = false
  vim.bo[S.buf].swapfile = false
  S.r = render.new(S.buf)
  S.prompt = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(S.prompt, "gopi://prompt")
  vim.bo[S.prompt].filetype = "gopi_prompt"
  vim.bo[S.prompt].swapfile = false
  vim.bo[S.prompt].completefunc = "v:lua.require'gopi.complete'.completefunc"
  require("gopi.cmp").register()
  sync.setup()
  vim.api.nvim_create_autocmd("VimResized", {
    group = vim.api.nvim_create_augroup("gopi.chat", { clear = true }),
    callback = function()
      M.on_resized()
    end,
  })
  -- Any change of the prompt (typing, a send clearing it, an extension's
  -- setEditorText) puts the widgets and the queue around it back in place.
  local due = false
  vim.api.nvim_buf_attach(S.prompt, false, {
    on_lines = function()
      if not due then
        due = true
        vim.schedule(function()
          due = false
          M.show_queue()
        end)
      end
    end,
  })
  local keys = config.options.keys
  local map = function(modes, fn, desc)
    for mode, key in pairs(modes) do
      if key and key ~= "" then
        vim.keymap.set(mode, key, fn, { buffer = S.prompt, desc = "gopi: " .. desc })
      end
    end
  end
  map(keys.send, function()
    M.submit(S.state.streaming and "steer" or "prompt")
  end, "send (steers while gopi works)")
  map(keys.follow_up, function()
    M.submit(S.state.streaming and "follow_up" or "prompt")
  end, "queue a follow-up")
  map(keys.abort, function()
    M.abort()
  end, "stop the run")
  -- The review key, in normal mode in the chat and the prompt.
  if keys.review and keys.review ~= "" then
    for _, b in ipairs({ S.buf, S.prompt }) do
      vim.keymap.set("n", keys.review, function()
        review.open()
      end, { buffer = b, desc = "gopi: open the question waiting for you" })
    end
  end
  require("gopi.help").map(S.buf, "chat")
  require("gopi.help").map(S.prompt, "chat")
end

--- How to open a waiting question, as a user reads it.
local function review_how()
  local k = config.options.keys.review
  return (k and k ~= "") and (k .. " in the chat or :GopiReview") or ":GopiReview"
end

--- The approval gate's questions: announced when asked (a message, a line
--- in the chat, the status), never opened for the user.
review.on_change = function(what, q)
  if what == "asked" then
    note_line(q.message, review_how() .. " opens it", vim.log.levels.WARN)
    -- In the chat after what led to it: the events before the question
    -- may still be on their way (gopi merges deltas over coalesce_ms).
    vim.defer_fn(function()
      if S.r and vim.tbl_contains(review.pending, q) then
        S.r:end_block()
        S.r:notice("⚑ waiting for you: " .. review.oneline(q.message) .. " — " .. review_how())
      end
    end, (config.options.coalesce_ms or 0) + 150)
  elseif what == "withdrawn" then
    table.insert(S.log, os.date("%H:%M:%S ") .. "withdrawn: " .. q.message)
    if S.r then
      S.r:notice("gopi withdrew its question: " .. review.oneline(q.message))
    end
  end
  M.redraw_bars()
end

--- Status for the winbar and statusline: model · thinking · context % ·
--- cost, as statusline text (a literal percent sign doubled, the
--- percentage in WarningMsg from 70% and ErrorMsg from 90%, after a "~"
--- while it is an estimate).
function M.status()
  local st = S.state.status or {}
  local parts = {}
  if S.state.streaming then
    table.insert(parts, spinner[(S.tick or 0) % #spinner + 1])
  end
  table.insert(parts, "gopi")
  local waiting = #review.pending
  if waiting > 0 then
    local what = waiting == 1 and review.label(review.pending[1]) or (waiting .. " questions")
    -- (%<: a bar too narrow for all is cut after this, not before.)
    table.insert(parts, "%#WarningMsg#⚑ " .. (what:gsub("%%", "%%%%")) .. " waits%*%<")
  end
  if st.model then
    table.insert(parts, (st.model:gsub("%%", "%%%%")))
  end
  if st.thinking and st.thinking ~= "off" then
    table.insert(parts, "think " .. st.thinking)
  end
  if st.percent then
    local pct = math.floor(st.percent + 0.5)
    local hl = pct >= 90 and "%#ErrorMsg#" or pct >= 70 and "%#WarningMsg#" or ""
    -- (~: estimated, after a compaction.)
    table.insert(parts, hl .. (st.estimated and "~" or "") .. pct .. "%%" .. (hl ~= "" and "%*" or ""))
  end
  if st.cost and st.cost > 0 then
    table.insert(parts, string.format("$%.3f", st.cost))
  end
  -- What extensions set with setStatus, in the order of their keys.
  local keys = vim.tbl_keys(S.ext_status)
  table.sort(keys)
  for _, k in ipairs(keys) do
    local text = S.ext_status[k]:gsub("[\r\n\t]+", " ")
    table.insert(parts, (text:gsub("%%", "%%%%")))
  end
  return table.concat(parts, " · ")
end

--- The status as plain text (no highlight items, one percent sign).
function M.status_text()
  return (M.status():gsub("%%#[%w_]+#", ""):gsub("%%%*", ""):gsub("%%<", ""):gsub("%%%%", "%%"))
end

function M.redraw_bars()
  local bar = " " .. M.status()
  if S.state.streaming and S.state.progress then
    bar = bar .. " · " .. S.state.progress:gsub("%%", "%%%%")
  end
  if S.title then
    bar = bar .. " · " .. S.title:gsub("%%", "%%%%")
  end
  for _, win in ipairs(vim.fn.win_findbuf(S.buf or -1)) do
    vim.wo[win].winbar = bar
  end
  vim.cmd("redrawstatus!")
end

local function spin(on)
  if on and not S.timer then
    S.timer = (vim.uv or vim.loop).new_timer()
    S.timer:start(
      0,
      120,
      vim.schedule_wrap(function()
        S.tick = (S.tick or 0) + 1
        M.redraw_bars()
      end)
    )
  elseif not on and S.timer then
    S.timer:stop()
    S.timer:close()
    S.timer = nil
    M.redraw_bars()
  end
end

function M.refresh_status()
  if not (S.client and S.client:running()) then
    return
  end
  S.client:request("get_state", {}, function(err, st)
    if err or not st then
      return
    end
    S.state.status.model = st.model and st.model.id or nil
    S.state.status.thinking = st.thinkingLevel
    S.state.session_file = st.sessionFile
    S.client:request("get_session_stats", {}, function(e2, stats)
      if not e2 and stats then
        local usage = stats.contextUsage or {}
        S.state.status.percent = usage.percent
        S.state.status.estimated = nil
        S.state.status.cost = stats.cost
        S.state.status.tokens = stats.tokens and stats.tokens.total
        if not usage.percent and (usage.contextWindow or 0) > 0 then
          -- Right after a compaction gopi does not know the size until a
          -- reply reports it: the messages' size is estimated meanwhile.
          return S.client:request("get_messages", {}, function(e3, res)
            if not e3 and res and not S.state.status.percent then
              S.state.status.percent = M.estimate((res or {}).messages) / usage.contextWindow * 100
              S.state.status.estimated = true
            end
            M.redraw_bars()
          end)
        end
      end
      M.redraw_bars()
    end)
  end)
end

--- How many tokens messages take, estimated as gopi does it: four
--- characters (UTF-16 code units) a token, of their text, thinking, tool
--- calls (name and arguments as JSON), images (4,800 characters) and
--- summaries.
function M.estimate(messages)
  local chars = 0
  local function count(text)
    if type(text) == "string" and text ~= "" then
      local ok, _, utf16 = pcall(vim.str_utfindex, text)
      chars = chars + (ok and utf16 or #text)
    end
  end
  for _, m in ipairs(messages or {}) do
    local content = m.content
    if type(content) == "string" then
      count(content)
    elseif m.role ~= "bashExecution" then
      for _, c in ipairs(content or {}) do
        if c.type == "text" then
          count(c.text)
        elseif c.type == "thinking" and m.role == "assistant" then
          count(c.thinking)
        elseif c.type == "toolCall" and m.role == "assistant" then
          count(c.name)
          count(vim.json.encode(c.arguments or vim.empty_dict()))
        elseif c.type == "image" and m.role ~= "user" then
          chars = chars + 4800
        end
      end
    end
    if m.role == "bashExecution" then
      count(m.command)
      count(m.output)
    elseif m.role == "compactionSummary" or m.role == "branchSummary" then
      count(m.summary)
    end
  end
  return math.floor((chars + 3) / 4)
end

--- The lines around the prompt's text: extensions' widgets above it (pi's
--- "aboveEditor", the default) or below it ("belowEditor"), and the queued
--- messages just above it.
local function show_queue()
  if not (S.prompt and vim.api.nvim_buf_is_valid(S.prompt)) then
    return
  end
  vim.api.nvim_buf_clear_namespace(S.prompt, qns, 0, -1)
  local above, below = {}, {}
  local keys = vim.tbl_keys(S.widgets)
  table.sort(keys)
  for _, k in ipairs(keys) do
    local w = S.widgets[k]
    local into = w.placement == "belowEditor" and below or above
    for _, l in ipairs(w.lines) do
      table.insert(into, { { (tostring(l):gsub("[\r\n]", " ")), "Special" } })
    end
  end
  for _, m in ipairs(S.state.queue.steering or {}) do
    table.insert(above, { { "⏵ steer: " .. m, "Comment" } })
  end
  for _, m in ipairs(S.state.queue.followUp or {}) do
    table.insert(above, { { "⏵ follow-up: " .. m, "Comment" } })
  end
  for _, img in ipairs(S.images) do
    table.insert(below, { { require("gopi.image").chip(img), "Special" }, { "  (:GopiImage! drops it)", "Comment" } })
  end
  if #above > 0 then
    vim.api.nvim_buf_set_extmark(S.prompt, qns, 0, 0, { virt_lines = above, virt_lines_above = true })
  end
  if #below > 0 then
    vim.api.nvim_buf_set_extmark(S.prompt, qns, vim.api.nvim_buf_line_count(S.prompt) - 1, 0, { virt_lines = below })
  end
  -- Lines above the first one show only in a window scrolled up to them
  -- (its topfill): a window at the top is kept there.
  for _, win in ipairs(vim.fn.win_findbuf(S.prompt)) do
    vim.api.nvim_win_call(win, function()
      local view = vim.fn.winsaveview()
      local fill = math.min(#above, math.max(vim.api.nvim_win_get_height(win) - 1, 0))
      if view.topline == 1 and view.topfill ~= fill then
        vim.fn.winrestview({ topline = 1, topfill = fill })
      end
    end)
  end
end
M.show_queue = show_queue

--- Runs of text or thinking deltas become one delta each: a batch of
--- thousands of deltas is one edit of the buffer, not thousands.
---@param evs gopi.Event[]
---@return gopi.Event[]
local function coalesce(evs)
  local out = {}
  for _, ev in ipairs(evs) do
    local e = ev.type == "message_update" and ev.assistantMessageEvent or nil
    local k = e and e.type
    local prev = out[#out]
    local pe = prev and prev.type == "message_update" and prev.assistantMessageEvent or nil
    if (k == "text_delta" or k == "thinking_delta") and pe and pe.type == k and pe.contentIndex == e.contentIndex then
      pe.delta = pe.delta .. (e.delta or "")
    elseif k == "text_delta" or k == "thinking_delta" then
      table.insert(out, { type = "message_update", assistantMessageEvent = { type = k, contentIndex = e.contentIndex, delta = e.delta or "" } })
    else
      table.insert(out, ev)
    end
  end
  return out
end

--- Shows the end of the chat in window win (the end of its last line, when
--- it is longer than the window) and remembers where that put the view.
function M.follow(win)
  if not (win and vim.api.nvim_win_is_valid(win) and vim.api.nvim_win_get_buf(win) == S.buf) then
    return
  end
  local last = vim.api.nvim_buf_line_count(S.buf)
  local text = vim.api.nvim_buf_get_lines(S.buf, last - 1, last, false)[1] or ""
  pcall(vim.api.nvim_win_set_cursor, win, { last, math.max(#text - 1, 0) })
  local view = vim.api.nvim_win_call(win, vim.fn.winsaveview)
  S.views[win] = { topline = view.topline, skipcol = view.skipcol or 0 }
end

--- Whether window win follows the chat's end as it grows. The window the
--- cursor is in follows while its cursor is on the last line. Another one
--- follows until it is scrolled up from where following put it, and again
--- once it shows the end.
local function following(win)
  local last = vim.api.nvim_buf_line_count(S.buf)
  if win == vim.api.nvim_get_current_win() then
    return vim.api.nvim_get_mode().mode == "n" and vim.api.nvim_win_get_cursor(win)[1] == last
  end
  local was = S.views[win]
  local info = vim.fn.getwininfo(win)[1]
  if not was or (info and info.botline >= last) then
    return true -- a new window, or the end is in view
  end
  if was.paused then
    return false
  end
  local view = vim.api.nvim_win_call(win, vim.fn.winsaveview)
  if view.topline < was.topline or (view.topline == was.topline and (view.skipcol or 0) < was.skipcol) then
    was.paused = true -- scrolled up
    return false
  end
  return true
end

--- What gopi sent, in one batch.
---@param evs gopi.Event[]
local function on_events(evs)
  evs = coalesce(evs)
  -- The windows at the chat's end (before the text grows) follow it.
  local followers = vim.tbl_filter(following, vim.fn.win_findbuf(S.buf))
  local was = S.state.streaming
  for _, ev in ipairs(evs) do
    local ok, err = pcall(S.r.event, S.r, ev, S.state)
    if not ok then
      table.insert(S.log, "render " .. tostring(ev.type) .. ": " .. tostring(err))
    end
    if ev.type == "tool_execution_start" then
      sync.tool_start(ev)
    elseif ev.type == "tool_execution_end" then
      -- Buffers of the files the tool changed show what is on disk.
      sync.tool_end(S.cwd or cwd(), ev, note)
    end
    if ev.type == "queue_update" then
      show_queue()
    elseif ev.type == "agent_settled" or ev.type == "thinking_level_changed" or ev.type == "compaction_end" then
      M.refresh_status()
    elseif ev.type == "mcp_server_state" then
      local warn = require("gopi.mcp").changed(ev.server)
      if warn then
        note_line(warn, ":GopiMcp", vim.log.levels.WARN)
      end
    end
  end
  if was ~= S.state.streaming then
    spin(S.state.streaming)
  end
  for _, win in ipairs(followers) do
    M.follow(win)
  end
end

local ui = {
  requests = {
    ["window/showMessageRequest"] = function(p, id)
      return review.ask(cwd(), p, id)
    end,
    ["pi/ui/input"] = function(p)
      return review.input(p)
    end,
    ["pi/ui/editor"] = function(p)
      return review.editor(p)
    end,
  },
  cancel = function(id)
    review.cancel(id)
  end,
  -- $/progress: what gopi is doing ("bash: ls", "Compacting context") in the window bar.
  progress = function(v)
    if v.kind == "end" then
      S.state.progress = nil
    elseif v.message then
      S.state.progress = v.message
    end
    M.redraw_bars()
  end,
  notification = function(method, p)
    -- A null (vim.NIL) or absent text or lines clears what the key had.
    if method == "pi/ui/setStatus" then
      if type(p.statusKey) == "string" then
        S.ext_status[p.statusKey] = type(p.statusText) == "string" and p.statusText ~= "" and p.statusText or nil
        M.redraw_bars()
      end
    elseif method == "pi/ui/setWidget" then
      if type(p.widgetKey) == "string" then
        S.widgets[p.widgetKey] = type(p.widgetLines) == "table" and { lines = p.widgetLines, placement = p.widgetPlacement } or nil
        show_queue()
      end
    elseif method == "pi/ui/setTitle" then
      S.title = type(p.title) == "string" and p.title ~= "" and p.title or nil
      M.redraw_bars()
    elseif method == "pi/ui/setEditorText" then
      if S.prompt and vim.api.nvim_buf_is_valid(S.prompt) then
        local text = type(p.text) == "string" and p.text or ""
        vim.api.nvim_buf_set_lines(S.prompt, 0, -1, false, vim.split(text, "\n", { plain = true }))
      end
    end
  end,
}

--- Starts gopi for the session (resuming file, or the directory's last).
function M.start(opts)
  opts = opts or {}
  buffers()
  -- What extensions showed belongs to the gopi that is going: the new one's
  -- extensions set theirs again when its session starts.
  S.ext_status, S.widgets, S.title = {}, {}, nil
  -- The new gopi starts its MCP servers again: a failure warns again.
  require("gopi.mcp").reset()
  show_queue()
  M.redraw_bars()
  S.cwd = cwd()
  local c, err
  c, err = client.start({
    cfg = config.options,
    cwd = S.cwd,
    session_file = opts.session_file,
    continue = opts.continue,
    ui = ui,
    on_events = on_events,
    on_ready = function(cl)
      M.load_history(function()
        cl:open_gate()
        M.refresh_status()
        require("gopi.complete").load_commands()
      end, true)
    end,
    on_error = function(msg)
      note(msg, vim.log.levels.ERROR)
    end,
    on_exit = function(code, signal)
      if S.client ~= c or S.stopping then
        return
      end
      S.state.streaming = false
      spin(false)
      review.clear()
      S.r:notice(
        string.format("gopi exited (code %d%s): :GopiRestart starts it again, :GopiLog has the log", code, signal ~= 0 and (", signal " .. signal) or "")
      )
      note(string.format("gopi exited (code %d). :GopiRestart starts it again; :GopiLog has the log.", code), vim.log.levels.ERROR)
    end,
  })
  if not c then
    note(err, vim.log.levels.ERROR)
    S.r:notice(err .. " (:checkhealth gopi)")
    return nil
  end
  S.client = c
  table.insert(S.log, os.date("%H:%M:%S ") .. "started " .. c.bin .. " (" .. c.how .. ") in " .. cwd())
  return c
end

--- Shows the session's messages (after a start, switch, fork or clone).
function M.load_history(done, now)
  S.client:request("get_messages", {}, function(err, res)
    if not err then
      S.r:clear()
      for _, m in ipairs((res or {}).messages or {}) do
        S.r:message(m)
      end
      S.r:refold()
      -- A session shown again opens at its end.
      for _, win in ipairs(vim.fn.win_findbuf(S.buf)) do
        M.follow(win)
      end
    end
    if done then
      done()
    end
  end, now)
end

--- The running client, started on first use.
function M.ensure()
  if S.client and S.client:running() then
    return S.client
  end
  return M.start({ continue = config.options.resume })
end

--- Windows of the chat in the current tab.
local function chat_windows()
  local out = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local b = vim.api.nvim_win_get_buf(win)
    if b == S.buf or b == S.prompt then
      table.insert(out, win)
    end
  end
  return out
end

--- The chat's window and its prompt's in the current tab (nil when gone).
local function panes()
  local chat_win, prompt_win
  for _, win in ipairs(chat_windows()) do
    if vim.api.nvim_win_get_buf(win) == S.buf then
      chat_win = chat_win or win
    else
      prompt_win = prompt_win or win
    end
  end
  return chat_win, prompt_win
end

--- Whether the whole chat (its window and its prompt's) is in the current tab.
function M.is_open()
  local chat_win, prompt_win = panes()
  return S.buf ~= nil and chat_win ~= nil and prompt_win ~= nil
end

--- Sizes the chat's windows as configured, for the editor's size now: the
--- floats' places and sizes, or the split's width (height for "below") and
--- the prompt's height.
local function place(chat_win, prompt_win)
  local o = config.options.chat
  local cols, lines = vim.o.columns, vim.o.lines
  if o.layout == "float" then
    local w, h = math.max(math.floor(cols * o.width), 10), math.max(math.floor(lines * o.height), 3)
    local col = math.max(cols - w - 2, 0)
    pcall(vim.api.nvim_win_set_config, chat_win, { relative = "editor", width = w, height = h, row = 1, col = col })
    pcall(vim.api.nvim_win_set_config, prompt_win, { relative = "editor", width = w, height = o.prompt_height, row = h + 3, col = col })
    return
  end
  if o.layout == "below" then
    pcall(vim.api.nvim_win_set_height, chat_win, math.max(math.floor(lines * o.height), 3))
  else
    pcall(vim.api.nvim_win_set_width, chat_win, math.max(math.floor(cols * o.width), 10))
  end
  pcall(vim.api.nvim_win_set_height, prompt_win, o.prompt_height)
end

--- After the editor was resized, the chat in every tab gets its configured
--- size back (its windows keep their size when other windows are resized).
local function on_resized()
  local here = vim.api.nvim_get_current_tabpage()
  for _, tab in ipairs(vim.api.nvim_list_tabpages()) do
    local chat_win, prompt_win
    for _, win in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
      local b = vim.api.nvim_win_get_buf(win)
      if b == S.buf then
        chat_win = chat_win or win
      elseif b == S.prompt then
        prompt_win = prompt_win or win
      end
    end
    if chat_win and prompt_win then
      if tab == here then
        place(chat_win, prompt_win)
      else
        -- A split's size is set in its own tab.
        vim.api.nvim_win_call(chat_win, function()
          place(chat_win, prompt_win)
        end)
      end
    end
  end
end
M.on_resized = on_resized

function M.open()
  buffers()
  -- What is left of a chat half closed (its window or its prompt's closed
  -- on their own) goes: the chat opens whole. (The tab's only window stays,
  -- showing an empty buffer, so that the tab stays too.)
  for _, win in ipairs(chat_windows()) do
    if #vim.api.nvim_tabpage_list_wins(0) > 1 then
      pcall(vim.api.nvim_win_close, win, true)
    else
      pcall(vim.api.nvim_win_set_buf, win, vim.api.nvim_create_buf(true, false))
    end
  end
  for win in pairs(S.views) do
    if not vim.api.nvim_win_is_valid(win) then
      S.views[win] = nil
    end
  end
  local o = config.options.chat
  local chat_win, prompt_win
  if o.layout == "float" then
    chat_win = vim.api.nvim_open_win(S.buf, true, { relative = "editor", width = 10, height = 3, row = 1, col = 0, border = "rounded", title = " gopi " })
    prompt_win = vim.api.nvim_open_win(S.prompt, true, { relative = "editor", width = 10, height = 1, row = 5, col = 0, border = "rounded" })
  else
    local cmd = ({ right = "botright vsplit", left = "topleft vsplit", below = "botright split" })[o.layout] or "botright vsplit"
    vim.cmd(cmd)
    chat_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(chat_win, S.buf)
    vim.cmd("belowright split")
    prompt_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(prompt_win, S.prompt)
    -- Resizing other windows (or the editor) leaves these as they are.
    for _, w in ipairs({ chat_win, prompt_win }) do
      if o.layout == "below" then
        vim.wo[w].winfixheight = true
      else
        vim.wo[w].winfixwidth = true
      end
    end
    vim.wo[prompt_win].winfixheight = true
  end
  place(chat_win, prompt_win)
  for _, w in ipairs({ chat_win }) do
    vim.wo[w].wrap = true
    vim.wo[w].linebreak = true
    vim.wo[w].number = false
    vim.wo[w].relativenumber = false
    vim.wo[w].foldcolumn = "1"
  end
  S.r:refold()
  M.redraw_bars()
  show_queue()
  M.follow(chat_win)
  M.ensure()
end

function M.close()
  for _, win in ipairs(chat_windows()) do
    if not pcall(vim.api.nvim_win_close, win, true) then
      -- The tab's last window: it shows another buffer instead.
      pcall(vim.api.nvim_win_set_buf, win, vim.api.nvim_create_buf(true, false))
    end
  end
end

--- :Gopi: closes the chat when it is open whole, else opens it whole.
function M.toggle()
  if M.is_open() then
    M.close()
  else
    M.open()
  end
end

--- Sends the prompt window's text: a prompt, or while gopi works a steer or follow-up.
function M.submit(mode)
  local lines = vim.api.nvim_buf_get_lines(S.prompt, 0, -1, false)
  local text = vim.trim(table.concat(lines, "\n"))
  if text == "" and #S.images == 0 then
    return
  end
  local images = S.images
  S.images = {}
  vim.api.nvim_buf_set_lines(S.prompt, 0, -1, false, {})
  M.send(text, mode, images)
end

--- Attaches an image (gopi.image) to the next message sent from the prompt.
function M.attach(img)
  table.insert(S.images, img)
  show_queue()
end

--- Drops the images attached to the next message.
function M.detach()
  S.images = {}
  show_queue()
end

--- A message that could not go back into the prompt (when it is still
--- empty) with its images, so that nothing typed is lost.
function M.restore(text, images)
  if text and text ~= "" and S.prompt and vim.api.nvim_buf_is_valid(S.prompt) then
    local cur = vim.api.nvim_buf_get_lines(S.prompt, 0, -1, false)
    if #cur == 1 and cur[1] == "" then
      vim.api.nvim_buf_set_lines(S.prompt, 0, -1, false, vim.split(text, "\n", { plain = true }))
    end
  end
  for i, img in ipairs(images or {}) do
    table.insert(S.images, i, img)
  end
  show_queue()
end

--- Sends text (with images: gopi.image attachments) as a prompt, or while
--- gopi works as a steer or follow-up.
function M.send(text, mode, images)
  local c = M.ensure()
  if not c then
    return
  end
  if S.state.streaming and mode == "prompt" then
    mode = "steer"
  end
  local params = { message = text }
  if images and #images > 0 then
    params.images = require("gopi.image").content(images)
  end
  c:request(mode or "prompt", params, function(err)
    if err then
      note(err.message or vim.inspect(err), vim.log.levels.ERROR)
    end
  end)
end

function M.abort()
  if S.client then
    S.client:request("abort", {}, function() end)
  end
end

--- Stops gopi (the session file stays) and starts it again on the same session.
function M.restart()
  local file = S.state.session_file
  if S.client then
    S.stopping = true
    S.client:stop()
    S.stopping = false
  end
  S.client = nil
  review.clear()
  S.r:clear()
  return M.start({ session_file = file })
end

function M.stop()
  spin(false)
  review.clear()
  if S.client then
    S.stopping = true
    S.client:stop()
    S.stopping = false
    S.client = nil
  end
end

return M
