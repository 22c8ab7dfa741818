// Command base is the baseline of the size comparison: a program that
// prints a number and links no JavaScript engine.
package main

import (
	"fmt"
	"os"
)

func main() { fmt.Println(len(os.Args) + 1) }
