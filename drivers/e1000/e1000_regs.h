/* Intel 8254x (82540EM, QEMU's `e1000`) and 82574 (`e1000e`) registers and descriptors used
 * by the driver: offsets into BAR 0, bits, and the legacy RX / extended TX descriptor
 * layouts (Intel's PCI/PCI-X Family of Gigabit Ethernet Controllers SDM, ch. 3 and 13). */
#pragma once
#include <stdint.h>

#define E1K_VENDOR 0x8086
#define E1K_DEV_82540EM 0x100e
#define E1K_DEV_82574 0x10d3

#define E1K_CTRL 0x0000
#define E1K_STATUS 0x0008
#define E1K_EERD 0x0014
#define E1K_CTRL_EXT 0x0018
#define E1K_ICR 0x00c0
#define E1K_ITR 0x00c4
#define E1K_IMS 0x00d0
#define E1K_IMC 0x00d8
#define E1K_RCTL 0x0100
#define E1K_TCTL 0x0400
#define E1K_TIPG 0x0410
#define E1K_RDBAL 0x2800
#define E1K_RDBAH 0x2804
#define E1K_RDLEN 0x2808
#define E1K_RDH 0x2810
#define E1K_RDT 0x2818
#define E1K_RDTR 0x2820
#define E1K_RADV 0x282c
#define E1K_TDBAL 0x3800
#define E1K_TDBAH 0x3804
#define E1K_TDLEN 0x3808
#define E1K_TDH 0x3810
#define E1K_TDT 0x3818
#define E1K_TIDV 0x3820
#define E1K_TADV 0x382c
#define E1K_RXCSUM 0x5000
#define E1K_MTA 0x5200 /* 128 registers */
#define E1K_RAL0 0x5400
#define E1K_RAH0 0x5404
/* Statistics: clear on read. */
#define E1K_CRCERRS 0x4000
#define E1K_RXERRC 0x400c
#define E1K_MPC 0x4010
#define E1K_GPRC 0x4074
#define E1K_GPTC 0x4080
#define E1K_GORCL 0x4088
#define E1K_GORCH 0x408c
#define E1K_GOTCL 0x4090
#define E1K_GOTCH 0x4094
#define E1K_RNBC 0x40a0

#define CTRL_FD (1u << 0)
#define CTRL_LRST (1u << 3)
#define CTRL_ASDE (1u << 5)
#define CTRL_SLU (1u << 6)
#define CTRL_RST (1u << 26)
#define CTRL_VME (1u << 30)
#define CTRL_PHY_RST (1u << 31)
#define STATUS_LU (1u << 1)
#define RAH_AV (1u << 31)

#define ICR_TXDW (1u << 0)
#define ICR_LSC (1u << 2)
#define ICR_RXSEQ (1u << 3)
#define ICR_RXDMT0 (1u << 4)
#define ICR_RXO (1u << 6)
#define ICR_RXT0 (1u << 7)
#define E1K_INTS (ICR_TXDW | ICR_LSC | ICR_RXSEQ | ICR_RXDMT0 | ICR_RXO | ICR_RXT0)

#define RCTL_EN (1u << 1)
#define RCTL_BAM (1u << 15)
#define RCTL_SECRC (1u << 26) /* strip the Ethernet CRC */
/* BSIZE 00 with BSEX 0: 2048-byte buffers. */
#define TCTL_EN (1u << 1)
#define TCTL_PSP (1u << 3)
#define TCTL_CT(x) ((uint32_t)(x) << 4)
#define TCTL_COLD(x) ((uint32_t)(x) << 12)
#define RXCSUM_IPOFL (1u << 8)
#define RXCSUM_TUOFL (1u << 9)

/* EERD: the 82540EM has the address at bit 8 and DONE at bit 4; the 82574 at 2 and 1. */
#define EERD_START 1u

/* Legacy receive descriptor. */
struct e1k_rx_desc {
	uint64_t addr;
	uint16_t length;
	uint16_t csum;
	uint8_t status;
	uint8_t errors;
	uint16_t special;
};
#define RXS_DD (1u << 0)
#define RXS_EOP (1u << 1)
#define RXS_IXSM (1u << 2) /* ignore the checksum indications */
#define RXS_TCPCS (1u << 5)
#define RXS_IPCS (1u << 6)
#define RXE_CE (1u << 0)
#define RXE_SE (1u << 1)
#define RXE_SEQ (1u << 2)
#define RXE_CXE (1u << 4)
#define RXE_TCPE (1u << 5)
#define RXE_IPE (1u << 6)
#define RXE_RXE (1u << 7)
#define RXE_FRAME (RXE_CE | RXE_SE | RXE_SEQ | RXE_CXE | RXE_RXE)

/* Transmit descriptors: an extended data descriptor, or a context descriptor (checksum
 * offsets for the data descriptors after it). Both are 16 bytes. */
struct e1k_tx_desc {
	uint64_t addr;  /* context: ipcss | ipcso << 8 | ipcse << 16 | tucss << 32 | tucso << 40 | tucse << 48 */
	uint32_t lower; /* length (20 bits) | DTYP << 20 | DCMD << 24 */
	uint32_t upper; /* status (bits 0-3) | POPTS << 8 | special << 16 (context: hdrlen, mss) */
};
#define TXD_DTYP_C (0u << 20)
#define TXD_DTYP_D (1u << 20)
#define TXD_CMD_EOP (1u << 24)
#define TXD_CMD_IFCS (1u << 25)
#define TXD_CMD_RS (1u << 27)
#define TXD_CMD_DEXT (1u << 29)
#define TXD_CTX_IP (1u << 25)  /* context TUCMD: the packet is IPv4 */
#define TXD_STAT_DD 1u
#define TXD_POPTS_IXSM (1u << 8)
#define TXD_POPTS_TXSM (1u << 9)
