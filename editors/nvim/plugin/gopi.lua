-- gopi's commands, all defined here, so that each one works before any
-- other was used (and without setup()). Nothing starts until one is used.
-- See :help gopi.
if vim.g.loaded_gopi then
  return
end
vim.g.loaded_gopi = true

if vim.fn.has("nvim-0.10") == 0 then
  vim.api.nvim_create_user_command("Gopi", function()
    vim.notify("gopi.nvim needs Neovim 0.10 or newer", vim.log.levels.ERROR)
  end, {})
  return
end

local function gopi()
  return require("gopi")
end
local cmd = vim.api.nvim_create_user_command

cmd("Gopi", function(o)
  if o.args ~= "" then
    if not require("gopi.chat").current():is_open() and not gopi().open() then
      return
    end
    gopi().send(o.args, "prompt")
  else
    gopi().toggle()
  end
end, { nargs = "*", desc = "Toggle the gopi chat, or send it a prompt" })
cmd("GopiAbort", function()
  gopi().abort()
end, { desc = "Stop gopi's run" })
cmd("GopiReview", function()
  gopi().review()
end, { desc = "Open the question gopi waits on (a change to review)" })
cmd("GopiNew", function()
  gopi().new_session()
end, { desc = "A new gopi session" })
cmd("GopiSessions", function()
  gopi().sessions()
end, { desc = "Resume one of this directory's sessions" })
cmd("GopiFork", function()
  gopi().fork()
end, { desc = "Fork the session from an earlier message" })
cmd("GopiClone", function()
  gopi().clone()
end, { desc = "Go on in a copy of the session" })
cmd("GopiRename", function(o)
  gopi().rename(o.args)
end, { nargs = "?", desc = "Name the session" })
cmd("GopiModel", function(o)
  gopi().model(o.args)
end, {
  nargs = "?",
  complete = function(lead)
    return require("gopi.complete").model_args(lead)
  end,
  desc = "Switch gopi's model",
})
cmd("GopiThinking", function(o)
  gopi().thinking(o.args)
end, {
  nargs = "?",
  complete = function(lead)
    return require("gopi.complete").thinking_args(lead)
  end,
  desc = "Set or cycle the thinking level",
})
cmd("GopiCompact", function(o)
  gopi().compact(o.args)
end, { nargs = "*", desc = "Compact the context" })
cmd("GopiExport", function(o)
  gopi().export(o.args)
end, { nargs = "?", complete = "file", desc = "Export the session to HTML (asks where) and open it" })
cmd("GopiMcp", function()
  gopi().mcp()
end, { desc = "The session's MCP servers and their state; pick one for its tools" })
cmd("GopiLog", function()
  gopi().log()
end, { desc = "gopi's log" })
cmd("GopiRestart", function()
  gopi().restart()
end, { desc = "Restart gopi on the same session" })
cmd("GopiChanges", function(o)
  gopi().changes(o.args)
end, {
  nargs = "?",
  complete = function(lead)
    return gopi().changed_files(lead)
  end,
  desc = "The files the last run changed in the quickfix list; with a file, its diff",
})
cmd("GopiRewind", function(o)
  gopi().rewind(o.args)
end, {
  nargs = "?",
  complete = function()
    return { "undo" }
  end,
  desc = "Back to a checkpoint: the files, the conversation or both (undo: take the last rewind back)",
})
cmd("GopiAdd", function(o)
  if o.range == 0 then
    gopi().add(nil, nil, o.args)
  else
    gopi().add(o.line1, o.line2, o.args)
  end
end, { range = true, nargs = "*", desc = "Add the file (or the range) to the prompt; its content goes along" })

cmd("GopiImage", function(o)
  gopi().image(o.args, o.bang)
end, {
  nargs = "?",
  bang = true,
  complete = "file",
  desc = "Attach an image (a file, or the clipboard's) to the next message; ! drops them",
})

local group = vim.api.nvim_create_augroup("gopi", { clear = true })
vim.api.nvim_create_autocmd("VimLeavePre", {
  group = group,
  callback = function()
    if package.loaded["gopi.chat"] then
      require("gopi.chat").current():stop()
    end
  end,
})

-- The last file buffer entered outside gopi's windows: what #buffer,
-- #selection and #diagnostics in a prompt mean (:help gopi-context).
vim.api.nvim_create_autocmd("BufEnter", {
  group = group,
  callback = function(a)
    if vim.bo[a.buf].buftype == "" and not vim.api.nvim_buf_get_name(a.buf):match("^gopi://") then
      vim.g.gopi_last_buffer = a.buf
    end
  end,
})
