-- Completion sources for the prompt window: nvim-cmp (`{ name = "gopi" }`)
-- and blink.cmp (module "gopi.blink"). Both offer what 'completefunc' does:
-- `/` from gopi's commands, `@` for files. See :help gopi-completion.
local complete = require("gopi.complete")

local function in_prompt(buf)
  local s = require("gopi.chat").session
  return s.prompt ~= nil and buf == s.prompt
end

local Kind = { Function = 3, File = 17 }

local function items(before)
  local out = {}
  for _, it in ipairs((complete.items(before))) do
    table.insert(out, {
      label = it.word,
      insertText = it.word,
      kind = it.word:sub(1, 1) == "/" and Kind.Function or Kind.File,
      detail = it.menu,
    })
  end
  return out
end

local cmp_source = {}
cmp_source.__index = cmp_source

function cmp_source.new()
  return setmetatable({}, cmp_source)
end

function cmp_source:is_available()
  return in_prompt(vim.api.nvim_get_current_buf())
end

function cmp_source:get_trigger_characters()
  return { "/", "@" }
end

function cmp_source:get_keyword_pattern()
  return [[\%([/@]\S*\)]]
end

function cmp_source:complete(params, callback)
  local before = params.context.cursor_before_line
  callback({ items = items(before), isIncomplete = true })
end

--- blink.cmp source: `sources.providers.gopi = { module = "gopi.blink" }`.
local blink = {}
blink.__index = blink

function blink.new()
  return setmetatable({}, blink)
end

function blink:enabled()
  return in_prompt(vim.api.nvim_get_current_buf())
end

function blink:get_trigger_characters()
  return { "/", "@" }
end

function blink:get_completions(ctx, callback)
  local line = ctx.line or vim.api.nvim_get_current_line()
  local col = ctx.cursor and ctx.cursor[2] or #line
  callback({ items = items(line:sub(1, col)), is_incomplete_forward = true, is_incomplete_backward = true })
  return function() end
end

local M = { cmp = cmp_source, blink = blink, items = items }

--- Registers the nvim-cmp source when nvim-cmp is installed.
function M.register()
  local ok, cmp = pcall(require, "cmp")
  if ok and cmp.register_source then
    cmp.register_source("gopi", cmp_source.new())
    return true
  end
  return false
end

return M
