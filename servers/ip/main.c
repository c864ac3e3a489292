#include <axrt.h>
#include "lwip/init.h"
#include "lwip/pbuf.h"
#include "lwip/netif.h"
void *lwip_heap_base;
int ip_hook_ip4_input(struct pbuf *p, struct netif *inp) { (void)p; (void)inp; return 0; }
int main(void)
{
	lwip_heap_base = (void *)ax_mo_map(ax_mo_create(MEM_SIZE / 4096 + 2, 0), 0, 0, MEM_SIZE / 4096 + 2, KP_R | KP_W);
	lwip_init();
	ax_printf("ip: lwip up\n");
	return 0;
}
