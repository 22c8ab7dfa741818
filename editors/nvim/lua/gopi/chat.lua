-- The chat: one gopi session, its buffer (markdown, streamed), and a
-- prompt window below it. A gopi.Chat object owns all of it: its two
-- buffers and its windows' views, the transcript's renderer, the run as
-- gopi reports it (running, queue, status, changed files), what extensions
-- show, the images attached, the plugin's log and the gopi process. The
-- plugin has one, M.current(); its windows are per tab page (:Gopi toggles
-- them in the current tab). Other modules get the chat from M.current()
-- (or as a parameter) and use its methods, never its fields.
local M = {}

local client = require("gopi.client")
local config = require("gopi.config")
local render = require("gopi.render")
local review = require("gopi.review")
local sync = require("gopi.sync")

local spinner = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" }
local qns = vim.api.nvim_create_namespace("gopi.queue")

---@class gopi.ChatState The run, as gopi's events and answers report it (gopi.render writes most of it).
---@field streaming boolean a run is going on
---@field queue {steering: string[], followUp: string[]} the messages waiting for the run
---@field changed table<string, boolean> the files the last run changed
---@field status {model?: string, thinking?: string, percent?: number, estimated?: boolean, cost?: number, tokens?: number, sandbox?: gopi.SandboxState}
---@field progress string|nil what gopi is doing ($/progress)
---@field session_file string|nil

---@class gopi.Chat
---@field id integer
---@field buf integer|nil the chat buffer (made when the chat first opens or starts)
---@field prompt integer|nil the prompt buffer
---@field r gopi.Renderer|nil the chat buffer's renderer
---@field client table|nil gopi (gopi.client), once started
---@field cwd string|nil the directory gopi was started in
---@field state gopi.ChatState
---@field widgets table<string, {lines: string[], placement?: string}> extensions' widgets, by key
---@field ext_status table<string, string> extensions' statuses, by key
---@field title string|nil an extension's title
---@field views table<integer, {topline: integer, skipcol: integer, paused?: boolean}> where following the chat's end last put each window's view
---@field log string[] the plugin's log (:GopiLog)
---@field images table[] images attached for the next prompt (gopi.image), shown under the prompt
---@field timer userdata|nil the spinner's, while a run goes on
---@field tick integer the spinner's frame
---@field stopping boolean gopi is being stopped on purpose: its exit is no news
local Chat = {}
Chat.__index = Chat
M.Chat = Chat

-- How many chats were made: each one's id.
local made = 0

--- A chat with nothing in it yet: no buffer, no window, no gopi.
---@return gopi.Chat
function Chat.new()
  made = made + 1
  return setmetatable({
    id = made,
    state = { streaming = false, queue = { steering = {}, followUp = {} }, changed = {}, status = {}, progress = nil },
    widgets = {},
    ext_status = {},
    views = {},
    log = {},
    images = {},
    tick = 0,
    stopping = false,
  }, Chat)
end
M.new = Chat.new

-- The plugin's chat.
local current

--- The plugin's chat, made on first use.
---@return gopi.Chat
function M.current()
  current = current or Chat.new()
  return current
end

function Chat:note(msg, level)
  table.insert(self.log, os.date("%H:%M:%S ") .. msg)
  vim.notify("gopi: " .. msg, level or vim.log.levels.INFO)
end

--- note, on one line that fits, with how (what to do about it) after it:
--- a longer message would stop the editor at a hit-enter prompt, which
--- takes the next key typed. The room is v:echospace (the message line
--- beside the ruler and showcmd) less note's "gopi: ".
---@param self gopi.Chat
local function note_line(self, msg, how, level)
  how = string.format("  (%s)", how)
  local room = math.max(vim.v.echospace - 6 - vim.fn.strdisplaywidth(how), 10)
  msg = review.oneline(msg)
  if vim.fn.strdisplaywidth(msg) > room then
    msg = vim.fn.strcharpart(msg, 0, room - 1) .. "…"
  end
  self:note(msg .. how, level)
end

--- The chat and prompt buffers, made once (again when wiped). The plugin's
--- chat has gopi://chat and gopi://prompt; another one's names end in its id.
function Chat:make_buffers()
  if self.buf and vim.api.nvim_buf_is_valid(self.buf) then
    return
  end
  local suffix = vim.fn.bufexists("gopi://chat") == 1 and ("-" .. self.id) or ""
  self.buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(self.buf, "gopi://chat" .. suffix)
  vim.bo[self.buf].filetype = "markdown"
  vim.bo[self.buf].modifiable = false
  vim.bo[self.buf].swapfile = false
  self.r = render.new(self.buf)
  self.prompt = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(self.prompt, "gopi://prompt" .. suffix)
  vim.bo[self.prompt].filetype = "gopi_prompt"
  vim.bo[self.prompt].swapfile = false
  vim.bo[self.prompt].completefunc = "v:lua.require'gopi.complete'.completefunc"
  require("gopi.cmp").register()
  sync.setup()
  vim.api.nvim_create_autocmd("VimResized", {
    group = vim.api.nvim_create_augroup("gopi.chat." .. self.id, { clear = true }),
    callback = function()
      self:on_resized()
    end,
  })
  -- Any change of the prompt (typing, a send clearing it, an extension's
  -- setEditorText) puts the widgets and the queue around it back in place.
  local due = false
  vim.api.nvim_buf_attach(self.prompt, false, {
    on_lines = function()
      if not due then
        due = true
        vim.schedule(function()
          due = false
          self:show_queue()
        end)
      end
    end,
  })
  local keys = config.options.keys
  local map = function(modes, fn, desc)
    for mode, key in pairs(modes) do
      if key and key ~= "" then
        vim.keymap.set(mode, key, fn, { buffer = self.prompt, desc = "gopi: " .. desc })
      end
    end
  end
  map(keys.send, function()
    self:submit(self.state.streaming and "steer" or "prompt")
  end, "send (steers while gopi works)")
  map(keys.follow_up, function()
    self:submit(self.state.streaming and "follow_up" or "prompt")
  end, "queue a follow-up")
  map(keys.abort, function()
    self:abort()
  end, "stop the run")
  -- The review key, in normal mode in the chat and the prompt.
  if keys.review and keys.review ~= "" then
    for _, b in ipairs({ self.buf, self.prompt }) do
      vim.keymap.set("n", keys.review, function()
        review.open()
      end, { buffer = b, desc = "gopi: open the question waiting for you" })
    end
  end
  require("gopi.help").map(self.buf, "chat")
  require("gopi.help").map(self.prompt, "chat")
end

--- How to open a waiting question, as a user reads it.
local function review_how()
  local k = config.options.keys.review
  return (k and k ~= "") and (k .. " in the chat or :GopiReview") or ":GopiReview"
end

--- The approval gate's questions this chat's gopi asks: announced when
--- asked (a message, a line in the chat, the status), never opened for the
--- user.
---@param self gopi.Chat
local function on_question(self, what, q)
  if what == "asked" then
    note_line(self, q.message, review_how() .. " opens it", vim.log.levels.WARN)
    -- In the chat after what led to it: the events before the question
    -- may still be on their way (gopi merges deltas over coalesce_ms).
    vim.defer_fn(function()
      if self.r and vim.tbl_contains(review.pending, q) then
        self.r:end_block()
        self.r:notice("⚑ waiting for you: " .. review.oneline(q.message) .. " — " .. review_how())
      end
    end, (config.options.coalesce_ms or 0) + 150)
  elseif what == "withdrawn" then
    table.insert(self.log, os.date("%H:%M:%S ") .. "withdrawn: " .. q.message)
    if self.r then
      self.r:notice("gopi withdrew its question: " .. review.oneline(q.message))
    end
  end
  self:redraw_bars()
end

--- Status for the winbar and statusline: model · thinking · context % ·
--- cost · sandbox, as statusline text (a literal percent sign doubled, the
--- percentage in WarningMsg from 70% and ErrorMsg from 90%, after a "~"
--- while it is an estimate).
function Chat:status()
  local st = self.state.status or {}
  local parts = {}
  if self.state.streaming then
    table.insert(parts, spinner[self.tick % #spinner + 1])
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
  local sandbox = M.sandbox_text(st.sandbox)
  if sandbox then
    table.insert(parts, sandbox)
  end
  -- What extensions set with setStatus, in the order of their keys.
  local keys = vim.tbl_keys(self.ext_status)
  table.sort(keys)
  for _, k in ipairs(keys) do
    local text = self.ext_status[k]:gsub("[\r\n\t]+", " ")
    table.insert(parts, (text:gsub("%%", "%%%%")))
  end
  return table.concat(parts, " · ")
end

--- The sandbox gopi reports (get_state's "sandbox"), as statusline text:
--- "sandbox read-only", "+net" when commands reach the network, in
--- WarningMsg and "not enforced" when the kernel cannot enforce the mode
--- (gopi then refuses the model's commands); nil when gopi runs none.
---@param sb gopi.SandboxState|nil
---@return string|nil
function M.sandbox_text(sb)
  if type(sb) ~= "table" or type(sb.mode) ~= "string" then
    return nil
  end
  local mode = sb.mode:gsub("%%", "%%%%")
  if (type(sb.problem) == "string" and sb.problem ~= "") or type(sb.layers) ~= "table" or #sb.layers == 0 then
    return "%#WarningMsg#sandbox " .. mode .. " not enforced%*"
  end
  return "sandbox " .. mode .. (sb.network and " +net" or "")
end

--- The status as plain text (no highlight items, one percent sign).
function Chat:status_text()
  return (self:status():gsub("%%#[%w_]+#", ""):gsub("%%%*", ""):gsub("%%<", ""):gsub("%%%%", "%%"))
end

function Chat:redraw_bars()
  local bar = " " .. self:status()
  if self.state.streaming and self.state.progress then
    bar = bar .. " · " .. self.state.progress:gsub("%%", "%%%%")
  end
  if self.title then
    bar = bar .. " · " .. self.title:gsub("%%", "%%%%")
  end
  for _, win in ipairs(vim.fn.win_findbuf(self.buf or -1)) do
    vim.wo[win].winbar = bar
  end
  vim.cmd("redrawstatus!")
end

---@param self gopi.Chat
local function spin(self, on)
  if on and not self.timer then
    self.timer = (vim.uv or vim.loop).new_timer()
    self.timer:start(
      0,
      120,
      vim.schedule_wrap(function()
        self.tick = self.tick + 1
        self:redraw_bars()
      end)
    )
  elseif not on and self.timer then
    self.timer:stop()
    self.timer:close()
    self.timer = nil
    self:redraw_bars()
  end
end

function Chat:refresh_status()
  if not self:running() then
    return
  end
  self.client:request("get_state", {}, function(err, st)
    if err or not st then
      return
    end
    self.state.status.model = st.model and st.model.id or nil
    self.state.status.thinking = st.thinkingLevel
    -- (Absent when gopi runs no sandbox.)
    self.state.status.sandbox = type(st.sandbox) == "table" and st.sandbox or nil
    self.state.session_file = st.sessionFile
    self.client:request("get_session_stats", {}, function(e2, stats)
      if not e2 and stats then
        local usage = stats.contextUsage or {}
        self.state.status.percent = usage.percent
        self.state.status.estimated = nil
        self.state.status.cost = stats.cost
        self.state.status.tokens = stats.tokens and stats.tokens.total
        if not usage.percent and (usage.contextWindow or 0) > 0 then
          -- Right after a compaction gopi does not know the size until a
          -- reply reports it: the messages' size is estimated meanwhile.
          return self.client:request("get_messages", {}, function(e3, res)
            if not e3 and res and not self.state.status.percent then
              self.state.status.percent = M.estimate((res or {}).messages) / usage.contextWindow * 100
              self.state.status.estimated = true
            end
            self:redraw_bars()
          end)
        end
      end
      self:redraw_bars()
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
function Chat:show_queue()
  if not (self.prompt and vim.api.nvim_buf_is_valid(self.prompt)) then
    return
  end
  vim.api.nvim_buf_clear_namespace(self.prompt, qns, 0, -1)
  local above, below = {}, {}
  local keys = vim.tbl_keys(self.widgets)
  table.sort(keys)
  for _, k in ipairs(keys) do
    local w = self.widgets[k]
    local into = w.placement == "belowEditor" and below or above
    for _, l in ipairs(w.lines) do
      table.insert(into, { { (tostring(l):gsub("[\r\n]", " ")), "Special" } })
    end
  end
  for _, m in ipairs(self.state.queue.steering or {}) do
    table.insert(above, { { "⏵ steer: " .. m, "Comment" } })
  end
  for _, m in ipairs(self.state.queue.followUp or {}) do
    table.insert(above, { { "⏵ follow-up: " .. m, "Comment" } })
  end
  for _, img in ipairs(self.images) do
    table.insert(below, { { require("gopi.image").chip(img), "Special" }, { "  (:GopiImage! drops it)", "Comment" } })
  end
  if #above > 0 then
    vim.api.nvim_buf_set_extmark(self.prompt, qns, 0, 0, { virt_lines = above, virt_lines_above = true })
  end
  if #below > 0 then
    vim.api.nvim_buf_set_extmark(self.prompt, qns, vim.api.nvim_buf_line_count(self.prompt) - 1, 0, { virt_lines = below })
  end
  -- Lines above the first one show only in a window scrolled up to them
  -- (its topfill): a window at the top is kept there.
  for _, win in ipairs(vim.fn.win_findbuf(self.prompt)) do
    vim.api.nvim_win_call(win, function()
      local view = vim.fn.winsaveview()
      local fill = math.min(#above, math.max(vim.api.nvim_win_get_height(win) - 1, 0))
      if view.topline == 1 and view.topfill ~= fill then
        vim.fn.winrestview({ topline = 1, topfill = fill })
      end
    end)
  end
end

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
function Chat:follow(win)
  if not (win and vim.api.nvim_win_is_valid(win) and vim.api.nvim_win_get_buf(win) == self.buf) then
    return
  end
  local last = vim.api.nvim_buf_line_count(self.buf)
  local text = vim.api.nvim_buf_get_lines(self.buf, last - 1, last, false)[1] or ""
  pcall(vim.api.nvim_win_set_cursor, win, { last, math.max(#text - 1, 0) })
  local view = vim.api.nvim_win_call(win, vim.fn.winsaveview)
  self.views[win] = { topline = view.topline, skipcol = view.skipcol or 0 }
end

--- Whether window win follows the chat's end as it grows. The window the
--- cursor is in follows while its cursor is on the last line. Another one
--- follows until it is scrolled up from where following put it, and again
--- once it shows the end.
---@param self gopi.Chat
local function following(self, win)
  local last = vim.api.nvim_buf_line_count(self.buf)
  if win == vim.api.nvim_get_current_win() then
    return vim.api.nvim_get_mode().mode == "n" and vim.api.nvim_win_get_cursor(win)[1] == last
  end
  local was = self.views[win]
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

--- What gopi sent, in one batch: into the chat buffer and the run's state.
---@param evs gopi.Event[]
function Chat:on_events(evs)
  evs = coalesce(evs)
  -- The windows at the chat's end (before the text grows) follow it.
  local followers = vim.tbl_filter(function(win)
    return following(self, win)
  end, vim.fn.win_findbuf(self.buf))
  local was = self.state.streaming
  for _, ev in ipairs(evs) do
    local ok, err = pcall(self.r.event, self.r, ev, self.state)
    if not ok then
      table.insert(self.log, "render " .. tostring(ev.type) .. ": " .. tostring(err))
    end
    if ev.type == "tool_execution_start" then
      sync.tool_start(ev)
    elseif ev.type == "tool_execution_end" then
      -- Buffers of the files the tool changed show what is on disk.
      sync.tool_end(self:workdir(), ev, function(msg, level)
        self:note(msg, level)
      end)
    end
    if ev.type == "queue_update" then
      self:show_queue()
    elseif ev.type == "agent_settled" or ev.type == "thinking_level_changed" or ev.type == "compaction_end" then
      self:refresh_status()
    elseif ev.type == "mcp_server_state" then
      local warn = require("gopi.mcp").changed(ev.server)
      if warn then
        note_line(self, warn, ":GopiMcp", vim.log.levels.WARN)
      end
    end
  end
  if was ~= self.state.streaming then
    spin(self, self.state.streaming)
  end
  for _, win in ipairs(followers) do
    self:follow(win)
  end
end

--- What gopi asks of the editor and tells it, beside its events: its
--- questions and dialogs, its progress, and extensions' UI.
---@param self gopi.Chat
local function ui(self)
  return {
    requests = {
      ["window/showMessageRequest"] = function(p, id)
        return review.ask(vim.fn.getcwd(), p, id, function(what, q)
          on_question(self, what, q)
        end)
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
        self.state.progress = nil
      elseif v.message then
        self.state.progress = v.message
      end
      self:redraw_bars()
    end,
    notification = function(method, p)
      -- A null (vim.NIL) or absent text or lines clears what the key had.
      if method == "pi/ui/setStatus" then
        if type(p.statusKey) == "string" then
          self.ext_status[p.statusKey] = type(p.statusText) == "string" and p.statusText ~= "" and p.statusText or nil
          self:redraw_bars()
        end
      elseif method == "pi/ui/setWidget" then
        if type(p.widgetKey) == "string" then
          self.widgets[p.widgetKey] = type(p.widgetLines) == "table" and { lines = p.widgetLines, placement = p.widgetPlacement } or nil
          self:show_queue()
        end
      elseif method == "pi/ui/setTitle" then
        self.title = type(p.title) == "string" and p.title ~= "" and p.title or nil
        self:redraw_bars()
      elseif method == "pi/ui/setEditorText" then
        if self.prompt and vim.api.nvim_buf_is_valid(self.prompt) then
          local text = type(p.text) == "string" and p.text or ""
          vim.api.nvim_buf_set_lines(self.prompt, 0, -1, false, vim.split(text, "\n", { plain = true }))
        end
      end
    end,
  }
end

--- Starts gopi for the chat (resuming opts.session_file, or with
--- opts.continue the directory's last session).
---@param opts? {session_file?: string, continue?: boolean}
function Chat:start(opts)
  opts = opts or {}
  self:make_buffers()
  -- What extensions showed belongs to the gopi that is going: the new one's
  -- extensions set theirs again when its session starts.
  self.ext_status, self.widgets, self.title = {}, {}, nil
  -- The new gopi starts its MCP servers again: a failure warns again.
  require("gopi.mcp").reset()
  self:show_queue()
  self:redraw_bars()
  self.cwd = vim.fn.getcwd()
  local c, err
  c, err = client.start({
    cfg = config.options,
    cwd = self.cwd,
    session_file = opts.session_file,
    continue = opts.continue,
    ui = ui(self),
    on_events = function(evs)
      self:on_events(evs)
    end,
    on_ready = function(cl)
      self:load_history(function()
        cl:open_gate()
        self:refresh_status()
        require("gopi.complete").load_commands(cl)
      end, true)
    end,
    on_error = function(msg)
      self:note(msg, vim.log.levels.ERROR)
    end,
    on_exit = function(code, signal)
      if self.client ~= c or self.stopping then
        return
      end
      self.state.streaming = false
      -- No gopi, no sandbox in force: the status stops naming one.
      self.state.status.sandbox = nil
      spin(self, false)
      review.clear()
      self.r:notice(
        string.format("gopi exited (code %d%s): :GopiRestart starts it again, :GopiLog has the log", code, signal ~= 0 and (", signal " .. signal) or "")
      )
      self:note(string.format("gopi exited (code %d). :GopiRestart starts it again; :GopiLog has the log.", code), vim.log.levels.ERROR)
    end,
  })
  if not c then
    self:note(err, vim.log.levels.ERROR)
    self.r:notice(err .. " (:checkhealth gopi)")
    return nil
  end
  self.client = c
  table.insert(self.log, os.date("%H:%M:%S ") .. "started " .. c.bin .. " (" .. c.how .. ") in " .. vim.fn.getcwd())
  return c
end

--- Shows the session's messages (after a start, switch, fork or clone).
function Chat:load_history(done, now)
  self.client:request("get_messages", {}, function(err, res)
    if not err then
      self.r:clear()
      for _, m in ipairs((res or {}).messages or {}) do
        self.r:message(m)
      end
      self.r:refold()
      -- A session shown again opens at its end.
      for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
        self:follow(win)
      end
    end
    if done then
      done()
    end
  end, now)
end

--- The running client, started on first use.
function Chat:ensure()
  local c = self:running()
  if c then
    return c
  end
  return self:start({ continue = config.options.resume })
end

--- Windows of the chat in the current tab.
---@param self gopi.Chat
local function chat_windows(self)
  local out = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local b = vim.api.nvim_win_get_buf(win)
    if b == self.buf or b == self.prompt then
      table.insert(out, win)
    end
  end
  return out
end

--- The chat's window and its prompt's in the current tab (nil when gone).
---@param self gopi.Chat
local function panes(self)
  local chat_win, prompt_win
  for _, win in ipairs(chat_windows(self)) do
    if vim.api.nvim_win_get_buf(win) == self.buf then
      chat_win = chat_win or win
    else
      prompt_win = prompt_win or win
    end
  end
  return chat_win, prompt_win
end

--- Whether the whole chat (its window and its prompt's) is in the current tab.
function Chat:is_open()
  local chat_win, prompt_win = panes(self)
  return self.buf ~= nil and chat_win ~= nil and prompt_win ~= nil
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
function Chat:on_resized()
  local here = vim.api.nvim_get_current_tabpage()
  for _, tab in ipairs(vim.api.nvim_list_tabpages()) do
    local chat_win, prompt_win
    for _, win in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
      local b = vim.api.nvim_win_get_buf(win)
      if b == self.buf then
        chat_win = chat_win or win
      elseif b == self.prompt then
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

--- Opens the chat whole in the current tab, and starts gopi if it is not running.
function Chat:open()
  self:make_buffers()
  -- What is left of a chat half closed (its window or its prompt's closed
  -- on their own) goes: the chat opens whole. (The tab's only window stays,
  -- showing an empty buffer, so that the tab stays too.)
  for _, win in ipairs(chat_windows(self)) do
    if #vim.api.nvim_tabpage_list_wins(0) > 1 then
      pcall(vim.api.nvim_win_close, win, true)
    else
      pcall(vim.api.nvim_win_set_buf, win, vim.api.nvim_create_buf(true, false))
    end
  end
  for win in pairs(self.views) do
    if not vim.api.nvim_win_is_valid(win) then
      self.views[win] = nil
    end
  end
  local o = config.options.chat
  local chat_win, prompt_win
  if o.layout == "float" then
    chat_win = vim.api.nvim_open_win(self.buf, true, { relative = "editor", width = 10, height = 3, row = 1, col = 0, border = "rounded", title = " gopi " })
    prompt_win = vim.api.nvim_open_win(self.prompt, true, { relative = "editor", width = 10, height = 1, row = 5, col = 0, border = "rounded" })
  else
    local cmd = ({ right = "botright vsplit", left = "topleft vsplit", below = "botright split" })[o.layout] or "botright vsplit"
    vim.cmd(cmd)
    chat_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(chat_win, self.buf)
    vim.cmd("belowright split")
    prompt_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(prompt_win, self.prompt)
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
  self.r:refold()
  self:redraw_bars()
  self:show_queue()
  self:follow(chat_win)
  self:ensure()
end

--- Closes the chat's windows in the current tab.
function Chat:close()
  for _, win in ipairs(chat_windows(self)) do
    if not pcall(vim.api.nvim_win_close, win, true) then
      -- The tab's last window: it shows another buffer instead.
      pcall(vim.api.nvim_win_set_buf, win, vim.api.nvim_create_buf(true, false))
    end
  end
end

--- :Gopi: closes the chat when it is open whole, else opens it whole.
function Chat:toggle()
  if self:is_open() then
    self:close()
  else
    self:open()
  end
end

--- Sends the prompt window's text: a prompt, or while gopi works a steer
--- or follow-up. It goes as everything the user sends does, through
--- require("gopi").send (slash commands, @file, #mentions, images).
function Chat:submit(mode)
  local lines = vim.api.nvim_buf_get_lines(self.prompt, 0, -1, false)
  local text = vim.trim(table.concat(lines, "\n"))
  if text == "" and #self.images == 0 then
    return
  end
  local images = self.images
  self.images = {}
  vim.api.nvim_buf_set_lines(self.prompt, 0, -1, false, {})
  require("gopi").send(text, mode, images)
end

--- Attaches an image (gopi.image) to the next message sent from the prompt.
function Chat:attach(img)
  table.insert(self.images, img)
  self:show_queue()
end

--- Drops the images attached to the next message.
function Chat:detach()
  self.images = {}
  self:show_queue()
end

--- A message that could not go back into the prompt (when it is still
--- empty) with its images, so that nothing typed is lost.
function Chat:restore(text, images)
  if text and text ~= "" and self.prompt and vim.api.nvim_buf_is_valid(self.prompt) then
    local cur = vim.api.nvim_buf_get_lines(self.prompt, 0, -1, false)
    if #cur == 1 and cur[1] == "" then
      vim.api.nvim_buf_set_lines(self.prompt, 0, -1, false, vim.split(text, "\n", { plain = true }))
    end
  end
  for i, img in ipairs(images or {}) do
    table.insert(self.images, i, img)
  end
  self:show_queue()
end

--- Sends text as it is (with images: gopi.image attachments) as a prompt,
--- or while gopi works as a steer or follow-up.
function Chat:send(text, mode, images)
  local c = self:ensure()
  if not c then
    return
  end
  if self.state.streaming and mode == "prompt" then
    mode = "steer"
  end
  local params = { message = text }
  if images and #images > 0 then
    params.images = require("gopi.image").content(images)
  end
  c:request(mode or "prompt", params, function(err)
    if err then
      self:note(err.message or vim.inspect(err), vim.log.levels.ERROR)
    end
  end)
end

function Chat:abort()
  if self.client then
    self.client:request("abort", {}, function() end)
  end
end

--- Stops gopi (the session file stays) and starts it again on the same session.
function Chat:restart()
  local file = self.state.session_file
  if self.client then
    self.stopping = true
    self.client:stop()
    self.stopping = false
  end
  self.client = nil
  review.clear()
  self.r:clear()
  return self:start({ session_file = file })
end

function Chat:stop()
  spin(self, false)
  review.clear()
  if self.client then
    self.stopping = true
    self.client:stop()
    self.stopping = false
    self.client = nil
  end
end

--- gopi, when it is running (nil otherwise).
function Chat:running()
  local c = self.client
  if c and c:running() then
    return c
  end
end

--- Sends pi/<command> to the running gopi; cb(err, result) gets an error
--- at once when gopi is not running (nothing is started).
---@param command gopi.CommandName
---@param params? table
---@param cb fun(err: table|nil, result: any)
function Chat:request(command, params, cb)
  local c = self:running()
  if not c then
    return cb({ message = "gopi is not running" })
  end
  c:request(command, params, cb)
end

--- Whether a run is going on.
function Chat:is_streaming()
  return self.state.streaming
end

--- The session's file, as gopi last said.
function Chat:session_file()
  return self.state.session_file
end

--- The files the last run changed (their paths as the tools named them).
---@return string[]
function Chat:changed_files()
  return vim.tbl_keys(self.state.changed or {})
end

--- The plugin's log, a copy.
function Chat:log_lines()
  return vim.deepcopy(self.log)
end

--- The directory gopi works in (the editor's, before gopi started).
function Chat:workdir()
  return self.cwd or vim.fn.getcwd()
end

--- The prompt buffer, while there is one.
function Chat:prompt_buffer()
  if self.prompt and vim.api.nvim_buf_is_valid(self.prompt) then
    return self.prompt
  end
end

return M
