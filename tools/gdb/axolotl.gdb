# gdb for a `make debug` boot: gdb -x tools/gdb/axolotl.gdb (from the repository's root).
# Loads the kernel's symbols and the Axolotl commands (tools/gdb/axolotl.py: ax-threads,
# ax-sym, ax-break, $ax_proc()), attaches to QEMU's stub (GDBPORT, else 1234) and runs to
# the kernel's C entry, kmain. QEMU waits at the firmware's first instruction until then.
set pagination off
set confirm off
file build/axolotl.elf
source tools/gdb/axolotl.py
ax-connect
hbreak kmain
continue
delete
