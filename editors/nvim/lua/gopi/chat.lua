-- The chat: one gopi session, its buffer (markdown, streamed), and a
-- prompt window below it. The session is the plugin's; the windows are per
-- tab page (:Gopi toggles them in the current tab).
local M = {}

local client = require("gopi.client")
local config = require("gopi.config")
local render = require("gopi.render")
local review = require("gopi.review")

---@class gopi.Session
---@field client table|nil
---@field buf integer chat buffer
---@field prompt integer prompt buffer
---@field r gopi.Renderer
local S = {
  state = { streaming = false, queue = { steering = {}, followUp = {} }, changed = {}, status = {}, progress = nil },
  widgets = {},
  ext_status = {},
  log = {},
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
    -- One line that fits: a longer message would stop the editor at a
    -- hit-enter prompt, which takes the next key typed.
    local how = string.format("  (%s opens it)", review_how())
    local room = math.max(vim.o.columns - 12 - vim.fn.strdisplaywidth(how), 10)
    local msg = review.oneline(q.message)
    if vim.fn.strdisplaywidth(msg) > room then
      msg = vim.fn.strcharpart(msg, 0, room - 1) .. "…"
    end
    note(msg .. how, vim.log.levels.WARN)
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
--- percentage in WarningMsg from 70% and ErrorMsg from 90%).
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
    table.insert(parts, hl .. pct .. "%%" .. (hl ~= "" and "%*" or ""))
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
    S.timer:start(0, 120, vim.schedule_wrap(function()
      S.tick = (S.tick or 0) + 1
      M.redraw_bars()
    end))
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
        S.state.status.percent = stats.contextUsage and stats.contextUsage.percent or nil
        S.state.status.cost = stats.cost
        S.state.status.tokens = stats.tokens and stats.tokens.total
      end
      M.redraw_bars()
    end)
  end)
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

--- What gopi sent, in one batch.
local function on_events(evs)
  evs = coalesce(evs)
  local was = S.state.streaming
  for _, ev in ipairs(evs) do
    local ok, err = pcall(S.r.event, S.r, ev, S.state)
    if not ok then
      table.insert(S.log, "render " .. tostring(ev.type) .. ": " .. tostring(err))
    end
    if ev.type == "queue_update" then
      show_queue()
    elseif ev.type == "agent_settled" or ev.type == "thinking_level_changed" or ev.type == "compaction_end" then
      M.refresh_status()
    end
  end
  if was ~= S.state.streaming then
    spin(S.state.streaming)
  end
  -- Follow the end of the chat in windows that were at its end.
  for _, win in ipairs(vim.fn.win_findbuf(S.buf)) do
    if win ~= vim.api.nvim_get_current_win() then
      local last = vim.api.nvim_buf_line_count(S.buf)
      pcall(vim.api.nvim_win_set_cursor, win, { last, 0 })
    end
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
  show_queue()
  M.redraw_bars()
  local c, err
  c, err = client.start({
    cfg = config.options,
    cwd = cwd(),
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
      S.r:notice(string.format("gopi exited (code %d%s): :GopiRestart starts it again, :GopiLog has the log", code, signal ~= 0 and (", signal " .. signal) or ""))
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

function M.is_open()
  return S.buf ~= nil and #chat_windows() > 0
end

function M.open()
  buffers()
  local o = config.options.chat
  local cols, lines = vim.o.columns, vim.o.lines
  local chat_win
  if o.layout == "float" then
    local w, h = math.floor(cols * o.width), math.floor(lines * o.height)
    chat_win = vim.api.nvim_open_win(S.buf, true, { relative = "editor", width = w, height = h, row = 1, col = cols - w - 2, border = "rounded", title = " gopi " })
    vim.api.nvim_open_win(S.prompt, true, { relative = "editor", width = w, height = o.prompt_height, row = h + 3, col = cols - w - 2, border = "rounded" })
  else
    local cmd = ({ right = "botright vsplit", left = "topleft vsplit", below = "botright split" })[o.layout] or "botright vsplit"
    vim.cmd(cmd)
    chat_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(chat_win, S.buf)
    if o.layout == "below" then
      vim.api.nvim_win_set_height(chat_win, math.floor(lines * o.height))
    else
      vim.api.nvim_win_set_width(chat_win, math.floor(cols * o.width))
    end
    vim.cmd("belowright split")
    vim.api.nvim_win_set_buf(0, S.prompt)
    vim.api.nvim_win_set_height(0, o.prompt_height)
  end
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
  pcall(vim.api.nvim_win_set_cursor, chat_win, { vim.api.nvim_buf_line_count(S.buf), 0 })
  M.ensure()
end

function M.close()
  for _, win in ipairs(chat_windows()) do
    pcall(vim.api.nvim_win_close, win, true)
  end
end

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
  if text == "" then
    return
  end
  vim.api.nvim_buf_set_lines(S.prompt, 0, -1, false, {})
  M.send(text, mode)
end

function M.send(text, mode)
  local c = M.ensure()
  if not c then
    return
  end
  if S.state.streaming and mode == "prompt" then
    mode = "steer"
  end
  c:request(mode or "prompt", { message = text }, function(err)
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
