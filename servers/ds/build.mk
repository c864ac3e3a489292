# ds: the data store (servers/ds/README.md).
ds_SRCS := servers/ds/ds.c servers/ds/store.c
$(eval $(call native_prog,ds))
