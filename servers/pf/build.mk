# pf: the packet filter (README.md). The decision logic (rules, match, state, filter) is
# pure and also built into the host unit tests (tests/unit/test_pf_*.c).
pf_SRCS := servers/pf/pf.c servers/pf/query.c servers/pf/store.c servers/pf/rules.c \
	servers/pf/match.c servers/pf/state.c servers/pf/filter.c servers/pf/flows.c
pf_CFLAGS := -Iservers/pf -Ilib/net
$(eval $(call native_prog,pf))
UNIT_EXTRA_SRCS += servers/pf/rules.c servers/pf/match.c servers/pf/state.c servers/pf/filter.c
UNIT_EXTRA_HDRS += servers/pf/rules.h servers/pf/match.h servers/pf/state.h servers/pf/filter.h lib/net/pf_proto.h
UNIT_EXTRA_CFLAGS += -Iservers/pf -Ilib/net
