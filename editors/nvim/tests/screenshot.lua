-- Turns a tmux pane capture (capture-pane -e: text with SGR colour codes)
-- into an HTML page of the same cells, for Chromium to screenshot.
--
--   nvim -l tests/screenshot.lua screen.ansi screen.html
local input, output = arg[1], arg[2]
local f = assert(io.open(input, "rb"))
local text = f:read("*a")
f:close()

local base = {
  [0] = "#1e1e1e",
  "#cd3131",
  "#0dbc79",
  "#e5e510",
  "#2472c8",
  "#bc3fbc",
  "#11a8cd",
  "#e5e5e5",
  "#666666",
  "#f14c4c",
  "#23d18b",
  "#f5f543",
  "#3b8eea",
  "#d670d6",
  "#29b8db",
  "#ffffff",
}
local function xterm(n)
  if n < 16 then
    return base[n]
  elseif n < 232 then
    n = n - 16
    local steps = { 0, 95, 135, 175, 215, 255 }
    return string.format("#%02x%02x%02x", steps[math.floor(n / 36) + 1], steps[math.floor(n / 6) % 6 + 1], steps[n % 6 + 1])
  end
  local g = 8 + (n - 232) * 10
  return string.format("#%02x%02x%02x", g, g, g)
end

local fg, bg, bold, italic, under, rev = nil, nil, false, false, false, false
local function apply(params)
  local ps = {}
  for p in (params == "" and "0" or params):gmatch("[^;]+") do
    table.insert(ps, tonumber(p) or 0)
  end
  local i = 1
  while i <= #ps do
    local p = ps[i]
    if p == 0 then
      fg, bg, bold, italic, under, rev = nil, nil, false, false, false, false
    elseif p == 1 then
      bold = true
    elseif p == 3 then
      italic = true
    elseif p == 4 then
      under = true
    elseif p == 7 then
      rev = true
    elseif p == 22 then
      bold = false
    elseif p == 23 then
      italic = false
    elseif p == 24 then
      under = false
    elseif p == 27 then
      rev = false
    elseif p >= 30 and p <= 37 then
      fg = base[p - 30]
    elseif p >= 90 and p <= 97 then
      fg = base[p - 90 + 8]
    elseif p == 39 then
      fg = nil
    elseif p >= 40 and p <= 47 then
      bg = base[p - 40]
    elseif p >= 100 and p <= 107 then
      bg = base[p - 100 + 8]
    elseif p == 49 then
      bg = nil
    elseif (p == 38 or p == 48) and ps[i + 1] == 5 then
      if p == 38 then
        fg = xterm(ps[i + 2])
      else
        bg = xterm(ps[i + 2])
      end
      i = i + 2
    elseif (p == 38 or p == 48) and ps[i + 1] == 2 then
      local c = string.format("#%02x%02x%02x", ps[i + 2], ps[i + 3], ps[i + 4])
      if p == 38 then
        fg = c
      else
        bg = c
      end
      i = i + 4
    end
    i = i + 1
  end
end

local function esc(s)
  return (s:gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;"))
end

local out = {}
local function span(s)
  if s == "" then
    return
  end
  local f_, b_ = fg or "#d4d4d4", bg
  if rev then
    f_, b_ = b_ or "#1e1e1e", fg or "#d4d4d4"
  end
  local style = "color:" .. f_
  if b_ then
    style = style .. ";background:" .. b_
  end
  if bold then
    style = style .. ";font-weight:bold"
  end
  if italic then
    style = style .. ";font-style:italic"
  end
  if under then
    style = style .. ";text-decoration:underline"
  end
  table.insert(out, '<span style="' .. style .. '">' .. esc(s) .. "</span>")
end

local pos = 1
while pos <= #text do
  local s, e, params = text:find("\27%[([%d;]*)m", pos)
  if not s then
    span(text:sub(pos))
    break
  end
  span(text:sub(pos, s - 1))
  apply(params)
  pos = e + 1
end

local html = [[<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body { margin: 0; background: #1e1e1e; }
pre { margin: 0; padding: 8px; font: 14px/1.25 "DejaVu Sans Mono", monospace; color: #d4d4d4; }
</style></head><body><pre>]] .. table.concat(out) .. "</pre></body></html>"
local w = assert(io.open(output, "wb"))
w:write(html)
w:close()
