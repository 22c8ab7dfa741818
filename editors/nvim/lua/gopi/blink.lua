-- blink.cmp's entry point for gopi's source (see gopi.cmp).
return require("gopi.cmp").blink
