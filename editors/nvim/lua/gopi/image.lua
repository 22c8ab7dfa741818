-- Images that go with a prompt: a file (:GopiImage path, or an `@shot.png`
-- in the prompt) or the clipboard (:GopiImage with no path, where a tool to
-- read an image from it is installed). Each one goes to gopi as pi's
-- ImageContent, {type = "image", data = <base64>, mimeType = "image/png"};
-- the prompt and the chat show it as a chip, `[image: shot.png 120 KB]`.
-- Files are read without blocking the editor (vim.uv), the clipboard with
-- vim.system.
local M = {}

local uv = vim.uv or vim.loop

-- An image larger than this is not attached; all of a prompt's together
-- stay under twice as much (gopi reads messages of up to 64 MiB, and
-- base64 makes them a third larger).
M.max_bytes = 20 * 1024 * 1024
M.max_total = 2 * M.max_bytes

-- The kinds of image models take, by file name extension.
M.extensions = { png = "image/png", jpg = "image/jpeg", jpeg = "image/jpeg", gif = "image/gif", webp = "image/webp" }

--- Whether path names an image by its extension (png, jpeg, gif, webp).
function M.is_image_path(path)
  local ext = type(path) == "string" and path:match("%.([%w]+)$")
  return ext ~= nil and M.extensions[ext:lower()] ~= nil
end

--- The image's MIME type from its first bytes; nil when it is none of
--- the kinds models take.
function M.sniff(bytes)
  if type(bytes) ~= "string" then
    return nil
  end
  if bytes:sub(1, 8) == "\137PNG\r\n\26\n" then
    return "image/png"
  elseif bytes:sub(1, 3) == "\255\216\255" then
    return "image/jpeg"
  elseif bytes:sub(1, 6) == "GIF87a" or bytes:sub(1, 6) == "GIF89a" then
    return "image/gif"
  elseif bytes:sub(1, 4) == "RIFF" and bytes:sub(9, 12) == "WEBP" then
    return "image/webp"
  end
  return nil
end

--- A size as people read it: 512 B, 120 KB, 1.4 MB.
function M.size_text(n)
  if n < 1024 then
    return string.format("%d B", n)
  elseif n < 1024 * 1024 then
    return string.format("%d KB", math.floor(n / 1024 + 0.5))
  end
  return string.format("%.1f MB", n / (1024 * 1024))
end

--- How many bytes base64 data stands for.
function M.decoded_size(data)
  if type(data) ~= "string" then
    return 0
  end
  local pad = data:sub(-2) == "==" and 2 or data:sub(-1) == "=" and 1 or 0
  return math.max(math.floor(#data / 4) * 3 - pad, 0)
end

-- Names of the images sent from here, by a key of their data: the chat
-- shows the name gopi's stored message does not keep.
local names = {}
local function key(data)
  return #data .. ":" .. data:sub(1, 96) .. data:sub(-96)
end

--- The chip of an image: `[image: shot.png 120 KB]`. img is one attached
--- here ({name, size}) or a content block of a message ({mimeType, data}).
function M.chip(img)
  local size = img.size or M.decoded_size(img.data)
  local name = img.name or (type(img.data) == "string" and names[key(img.data)])
  if not name then
    name = (img.mimeType or "image"):gsub("^image/", ""):upper()
  end
  return string.format("[image: %s %s]", name, M.size_text(size))
end

--- The attachment of bytes (an image's): {name, size, mimeType, data}, or
--- nil and why not.
function M.from_bytes(bytes, name)
  local mime = M.sniff(bytes)
  if not mime then
    return nil, name .. " is not an image gopi can send (png, jpeg, gif or webp)"
  end
  if #bytes > M.max_bytes then
    return nil, string.format("%s is %s; images over %s are not sent", name, M.size_text(#bytes), M.size_text(M.max_bytes))
  end
  local data = vim.base64.encode(bytes)
  names[key(data)] = name
  return { name = name, size = #bytes, mimeType = mime, data = data }
end

--- The ImageContent blocks of attachments, as pi's prompt takes them.
function M.content(list)
  local out = {}
  for _, img in ipairs(list or {}) do
    table.insert(out, { type = "image", data = img.data, mimeType = img.mimeType })
  end
  return out
end

--- Reads the image at path without blocking; cb(attachment) or cb(nil, why)
--- runs on the main loop.
function M.read(path, cb)
  local done = vim.schedule_wrap(cb)
  local name = vim.fn.fnamemodify(path, ":t")
  local abs = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  uv.fs_stat(abs, function(err, st)
    if err or not st then
      return done(nil, path .. ": no such file")
    end
    if st.type ~= "file" then
      return done(nil, path .. " is not a file")
    end
    if st.size > M.max_bytes then
      return done(nil, string.format("%s is %s; images over %s are not sent", path, M.size_text(st.size), M.size_text(M.max_bytes)))
    end
    uv.fs_open(abs, "r", 438, function(e1, fd)
      if e1 or not fd then
        return done(nil, path .. ": " .. tostring(e1))
      end
      uv.fs_read(fd, st.size, 0, function(e2, bytes)
        uv.fs_close(fd)
        if e2 or not bytes then
          return done(nil, path .. ": " .. tostring(e2))
        end
        -- base64 and the rest on the main loop (vim.base64 is not for
        -- libuv's threads).
        vim.schedule(function()
          cb(M.from_bytes(bytes, name))
        end)
      end)
    end)
  end)
end

--- Reads all paths; cb(attachments) when all were read, or cb(nil, why)
--- for the first that failed.
function M.read_all(paths, cb)
  local out, left, failed = {}, #paths, false
  if left == 0 then
    return cb(out)
  end
  for i, p in ipairs(paths) do
    M.read(p, function(img, err)
      if failed then
        return
      end
      if not img then
        failed = true
        return cb(nil, err)
      end
      out[i] = img
      left = left - 1
      if left == 0 then
        cb(out)
      end
    end)
  end
end

-- The tools that print the clipboard's image, the first one installed is
-- used (Wayland's first when it runs, X's first under X).
local function tools()
  local wl = { "wl-paste", "--no-newline", "--type", "image/png" }
  local x = { "xclip", "-selection", "clipboard", "-t", "image/png", "-o" }
  local mac = { "pngpaste", "-" }
  if vim.env.WAYLAND_DISPLAY and vim.env.WAYLAND_DISPLAY ~= "" then
    return { wl, x, mac }
  end
  return { x, wl, mac }
end

--- The command that prints the clipboard's image, nil when none is installed.
function M.clipboard_tool()
  for _, t in ipairs(tools()) do
    if vim.fn.executable(t[1]) == 1 then
      return t
    end
  end
  return nil
end

--- Reads the clipboard's image without blocking; cb(attachment) or
--- cb(nil, why) on the main loop.
function M.from_clipboard(cb)
  local tool = M.clipboard_tool()
  if not tool then
    return cb(nil, "no tool to read an image from the clipboard: install wl-clipboard (Wayland), xclip (X11) or pngpaste (macOS), or give :GopiImage a path")
  end
  -- (A tool that hangs, as xclip can with no X server answering, is
  -- stopped after a while.)
  local ok, err = pcall(vim.system, tool, { text = false, timeout = 5000 }, function(res)
    vim.schedule(function()
      local bytes = res.stdout or ""
      if res.code ~= 0 or bytes == "" then
        local said = vim.trim(((res.stderr or ""):gsub("\n.*", "")))
        return cb(nil, "the clipboard holds no image (" .. tool[1] .. (said ~= "" and (": " .. said) or " found none") .. ")")
      end
      if not M.sniff(bytes) then
        return cb(nil, "the clipboard holds no image gopi can send (png, jpeg, gif or webp)")
      end
      cb(M.from_bytes(bytes, "clipboard.png"))
    end)
  end)
  if not ok then
    cb(nil, tool[1] .. ": " .. tostring(err))
  end
end

--- The `@path` references in text that name images (by their extension),
--- trailing punctuation left out: { "shot.png", "img/b.jpeg" }.
function M.refs(text)
  return require("gopi.context").at_refs(text, function(ref)
    return M.is_image_path(ref) and ref or nil
  end)
end

return M
