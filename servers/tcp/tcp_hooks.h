/* lwIP's hooks in tcp's instance (LWIP_HOOK_FILENAME in lwipopts.h), included by lwIP's
 * sources after its own headers. */
#pragma once

struct tcp_pcb;
struct tcp_hdr;
struct pbuf;
/* rx.c: every segment that found its connection, before lwIP processes it; anything but
 * ERR_OK drops it (an ACK war's ACK, seg.h ts_oow_dup_ack). */
err_t ts_inpacket(struct tcp_pcb *pcb, struct tcp_hdr *hdr, u16_t optlen, u16_t opt1len, u8_t *opt2, struct pbuf *p);
#define LWIP_HOOK_TCP_INPACKET_PCB(pcb, hdr, optlen, opt1len, opt2, p) ts_inpacket(pcb, hdr, optlen, opt1len, opt2, p)
