-- Buffers that stay true to their files: gopi's edit, write and bash tools
-- change files on disk behind the editor's back, and so does a rewind
-- (gopi.rewind). When one of them ends, the buffers of the files it changed
-- are loaded again (`:checktime`) when they have no unsaved changes; a
-- buffer with unsaved changes is kept as it is, with a warning, for the
-- user to choose (`:e!` or `:w`).
local M = {}

local uv = vim.uv or vim.loop

--- How each buffer's file looked when the buffer last read or wrote it.
M.seen = {}

--- A file's path made comparable: its real path (for a file not there yet,
--- its directory's real path and its name).
local function key(path)
  path = vim.fs.normalize(path)
  return uv.fs_realpath(path) or ((uv.fs_realpath(vim.fs.dirname(path)) or vim.fs.dirname(path)) .. "/" .. vim.fs.basename(path))
end

--- What changes when a file is written: its time, size and inode.
local function stamp(path)
  local s = uv.fs_stat(path)
  if not s then
    return "none"
  end
  return string.format("%d.%d:%d:%d", s.mtime.sec, s.mtime.nsec or 0, s.size, s.ino or 0)
end

--- The loaded buffers that hold files: { buf, path, key }.
local function file_buffers()
  local out = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" then
      local name = vim.api.nvim_buf_get_name(b)
      if name ~= "" then
        table.insert(out, { buf = b, path = name, key = key(name) })
      end
    end
  end
  return out
end

--- A tool's path argument as an absolute path (relative ones are gopi's
--- working directory's; a leading @ is not part of the path).
function M.resolve(cwd, path)
  path = path:gsub("^@", "")
  path = vim.fs.normalize(path)
  if path:sub(1, 1) ~= "/" then
    path = cwd .. "/" .. path
  end
  return path
end

local function note_seen(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  if name ~= "" and vim.bo[buf].buftype == "" then
    M.seen[buf] = stamp(name)
  end
end

--- Starts keeping what each buffer last saw of its file (the buffers there
--- already are taken as they are now).
function M.setup()
  local group = vim.api.nvim_create_augroup("gopi.sync", { clear = true })
  vim.api.nvim_create_autocmd({ "BufNewFile", "BufReadPost", "BufWritePost", "FileChangedShellPost" }, {
    group = group,
    callback = function(a)
      note_seen(a.buf)
    end,
  })
  vim.api.nvim_create_autocmd({ "BufUnload", "BufWipeout" }, {
    group = group,
    callback = function(a)
      M.seen[a.buf] = nil
    end,
  })
  for _, f in ipairs(file_buffers()) do
    M.seen[f.buf] = M.seen[f.buf] or stamp(f.path)
  end
end

--- The arguments of the tools running, by toolCallId (tool_execution_end
--- does not repeat them).
M.running = {}

--- tool_execution_start: keeps the tool's arguments for its end.
---@param ev gopi.ToolExecutionStart
function M.tool_start(ev)
  if ev.toolName == "edit" or ev.toolName == "write" or ev.toolName == "bash" then
    M.running[ev.toolCallId or ""] = type(ev.args) == "table" and ev.args or {}
  end
end

--- Loads again the buffers of the files whose keys are in targets (nil:
--- every file buffer) when they have no unsaved changes. One with unsaved
--- changes is kept as it is, and note(message, level) warns of it, naming
--- why ("edit", "bash", "rewind"): once per change to its file, or always
--- with opts.always (the caller knows the file was just written). A buffer
--- whose file is not there is left alone. Returns the buffers loaded again
--- and those kept.
---@param targets table<string, boolean>|nil
---@param why string
---@param note fun(message: string, level?: integer)
---@param opts? {always?: boolean}
function M.reload(targets, why, note, opts)
  opts = opts or {}
  local reload, kept = {}, {}
  for _, f in ipairs(file_buffers()) do
    if (not targets or targets[f.key]) and uv.fs_stat(f.path) then
      if not vim.bo[f.buf].modified then
        table.insert(reload, f)
      else
        local now = stamp(f.path)
        if opts.always or (M.seen[f.buf] and M.seen[f.buf] ~= now) then
          M.seen[f.buf] = now -- warned once
          table.insert(kept, f)
        end
      end
    end
  end
  if #reload > 0 then
    -- Loaded again without asking, whatever 'autoread' says: the buffer has
    -- nothing of the user's to lose. (:checktime leaves a file that did not
    -- change alone.)
    local autoread = vim.o.autoread
    vim.o.autoread = true
    for _, f in ipairs(reload) do
      if M.seen[f.buf] == "none" then
        -- A buffer of a file that was not there: :checktime would ask
        -- whether to load the file created since; it is read in again.
        pcall(vim.api.nvim_buf_call, f.buf, function()
          vim.cmd("silent! edit")
        end)
      else
        pcall(vim.cmd, "silent! checktime " .. f.buf)
      end
      note_seen(f.buf)
    end
    vim.o.autoread = autoread
  end
  for _, f in ipairs(kept) do
    note(
      string.format(
        "%s changed on disk (%s) while its buffer has unsaved changes: the buffer is kept; :e! loads the file, :w writes the buffer over it",
        vim.fn.fnamemodify(f.path, ":~:."),
        why
      ),
      vim.log.levels.WARN
    )
  end
  return reload, kept
end

--- A file's path as the keys of M.reload's targets.
M.key = key

--- tool_execution_end of an edit, a write or a bash command: the buffers of
--- the files it may have changed (edit and write: their file; bash: every
--- file) are loaded again (M.reload).
---@param cwd string
---@param ev gopi.ToolExecutionEnd
---@param note fun(message: string, level?: integer)
function M.tool_end(cwd, ev, note)
  local args = M.running[ev.toolCallId or ""] or (type(ev.args) == "table" and ev.args) or {}
  M.running[ev.toolCallId or ""] = nil
  local targets
  if (ev.toolName == "edit" or ev.toolName == "write") and type(args.path) == "string" then
    targets = { [key(M.resolve(cwd, args.path))] = true }
  elseif ev.toolName ~= "bash" then
    return
  end
  M.reload(targets, ev.toolName, note)
end

return M
