# lib/swifi: software fault injection (README.md). Built once for Axolotl programs
# (SWIFI_OBJS, for a program that injects faults to link) and into the host unit tests
# (test_swifi).
SWIFI_OBJS := $(B)/obj/swifi/x86dec.o $(B)/obj/swifi/swifi.o $(B)/obj/swifi/elfsym.o
$(SWIFI_OBJS): $(B)/obj/swifi/%.o: lib/swifi/%.c $(B)/kflags
	@mkdir -p $(dir $@)
	$(CC) $(UCFLAGS) -Ilib/swifi -c $< -o $@
UNIT_EXTRA_SRCS += lib/swifi/x86dec.c lib/swifi/swifi.c lib/swifi/elfsym.c
UNIT_EXTRA_HDRS += $(wildcard lib/swifi/*.h)
UNIT_EXTRA_CFLAGS += -Ilib/swifi
