/* Registers and descriptors of the two advanced-descriptor Intel families the ixgbe driver
 * drives: offsets into BAR 0 and their bits, from
 *   IGB_*   Intel 82576EB Gigabit Ethernet Controller Datasheet (QEMU's `-device igb`),
 *           ch. 8 (registers) and 7.1/7.2 (descriptors);
 *   IXGBE_* Intel 82599 10 GbE Controller Datasheet, ch. 8 (registers) and 7.1/7.2.
 *   IX_*    what both share (the advanced RX/TX descriptor formats, the PCI ids' vendor).
 * Only the chip-variant table (chip.c) looks at IGB_ and IXGBE_ names; everything else goes
 * through it. Host-compilable (tests/unit/test_ixgbe_model.c). */
#pragma once
#include <stdint.h>

#define IX_VENDOR 0x8086
#define IX_DEV_82576 0x10c9      /* 82576 copper (QEMU's igb) */
#define IX_DEV_82599_SFP 0x10fb  /* 82599ES SFP+ */
#define IX_DEV_82599_KX4 0x10f7  /* 82599 KX4 backplane */
#define IX_DEV_82599_SFP_EM 0x1507
#define IX_DEV_82599EN_SFP 0x1557

/* ---- 82576 (IGB_) ---- */
#define IGB_CTRL 0x00000
#define IGB_CTRL_SLU (1u << 6)
#define IGB_CTRL_RST (1u << 26)
#define IGB_CTRL_PHY_RST (1u << 31)
#define IGB_CTRL_LRST (1u << 3)
#define IGB_STATUS 0x00008
#define IGB_STATUS_LU (1u << 1)
#define IGB_STATUS_SPEED(v) (((v) >> 6) & 3u) /* 0: 10 Mb/s, 1: 100, 2 or 3: 1000 */
#define IGB_EERD 0x00014
#define IGB_EERD_START 1u
#define IGB_EERD_DONE (1u << 1)
#define IGB_EERD_ADDR_SHIFT 2
#define IGB_MDIC 0x00020 /* PHY access: data 15:0, register 20:16, PHY 25:21, op 27:26, ready 28 */
#define IGB_MDIC_PHY1 (1u << 21)
#define IGB_MDIC_WRITE (1u << 26)
#define IGB_MDIC_READY (1u << 28)
#define IGB_PHY_BMCR 0 /* MII control: 1000 Mb/s, full duplex, autonegotiation (re)started */
#define IGB_BMCR_AUTONEG (0x0040u | 0x0100u | 0x1000u | 0x0200u)
#define IGB_ICR 0x000c0 /* the 8254x-compatible cause/mask registers QEMU's model implements */
#define IGB_ICR_TXDW (1u << 0)
#define IGB_ICR_LSC (1u << 2)
#define IGB_ICR_RXDMT0 (1u << 4)
#define IGB_ICR_RXO (1u << 6)
#define IGB_ICR_RXDW (1u << 7)
#define IGB_IMS 0x000d0
#define IGB_IMC 0x000d8
#define IGB_IAM 0x000e0
#define IGB_EIMS 0x01524 /* extended causes: bit v = MSI-X vector v (MSI-X mode) */
#define IGB_EIMC 0x01528
#define IGB_EIAC 0x0152c /* auto-clear: EICR bit v cleared when vector v's message is sent */
#define IGB_EIAM 0x01530 /* auto-mask: EIMS bit v cleared then (with GPIE.EIAME) */
#define IGB_EICR 0x01580
#define IGB_GPIE 0x01514 /* 0: legacy interrupts (ICR and INTx) */
#define IGB_GPIE_NSICR (1u << 0)      /* reading ICR clears it whatever IMS says */
#define IGB_GPIE_MSIX (1u << 4)       /* multiple MSI-X: causes go to EICR bits through the IVARs */
#define IGB_GPIE_EIAME (1u << 30)     /* EIAM applies to MSI-X messages */
#define IGB_GPIE_PBA (1u << 31)       /* PBA support: MSI-X pending bits in the PBA */
#define IGB_IVAR0 0x01700 /* queue n: RX byte 4n (n<8), TX byte 4n+1; bit 7 valid */
#define IGB_IVAR_MISC 0x01740 /* byte 0: TCP timer, byte 1: other causes (ICR & IMS, e.g. LSC) */
#define IGB_MSIX_VECTORS 10   /* the PF's MSI-X table (QEMU's model too) */
#define IGB_EITR0 0x01680
#define IGB_RCTL 0x00100
#define IGB_RCTL_EN (1u << 1)
#define IGB_RCTL_BAM (1u << 15)
#define IGB_RCTL_SECRC (1u << 26)
#define IGB_TCTL 0x00400
#define IGB_TCTL_EN (1u << 1)
#define IGB_TCTL_PSP (1u << 3)
#define IGB_TCTL_CT(x) ((uint32_t)(x) << 4)
#define IGB_TCTL_COLD(x) ((uint32_t)(x) << 12)
#define IGB_RXQ(n) (0x0c000u + 0x40u * (n)) /* RDBAL; RDBAH +4, RDLEN +8, SRRCTL +0xc, RDH +0x10, RDT +0x18, RXDCTL +0x28 */
#define IGB_TXQ(n) (0x0e000u + 0x40u * (n)) /* TDBAL; TDBAH +4, TDLEN +8, TDH +0x10, TDT +0x18, TXDCTL +0x28 */
#define IGB_SRRCTL(n) (IGB_RXQ(n) + 0x0c)
#define IGB_SRRCTL_BSIZEPKT(kib) ((uint32_t)(kib) & 0x7f) /* 1 KiB units */
#define IGB_SRRCTL_DESCTYPE_ADV1 (1u << 25)                /* advanced, one buffer */
#define IGB_SRRCTL_DROP_EN (1u << 31)
#define IGB_RXCSUM 0x05000
#define IGB_RXCSUM_IPOFL (1u << 8)
#define IGB_RXCSUM_TUOFL (1u << 9)
#define IGB_RXCSUM_PCSD (1u << 13) /* the write-back carries the RSS hash, not a checksum */
#define IGB_MTA 0x05200 /* 128 registers */
#define IGB_RAL0 0x05400
#define IGB_RAH0 0x05404
#define IGB_MRQC 0x05818
#define IGB_MRQC_RSS 2u /* bits 2:0 = 010: RSS only (001 is VMDq) */
#define IGB_RETA 0x05c00  /* 32 registers, 4 one-byte entries each */
#define IGB_RSSRK 0x05c80 /* 10 registers */
#define IGB_NQUEUES 16
/* statistics (clear on read in the datasheet) */
#define IGB_CRCERRS 0x04000
#define IGB_RXERRC 0x0400c
#define IGB_MPC 0x04010
#define IGB_GPRC 0x04074
#define IGB_GPTC 0x04080
#define IGB_GORCL 0x04088
#define IGB_GOTCL 0x04090
#define IGB_RNBC 0x040a0

/* ---- 82599 (IXGBE_) ---- */
#define IXGBE_CTRL 0x00000
#define IXGBE_CTRL_LRST (1u << 3)
#define IXGBE_CTRL_RST (1u << 26)
#define IXGBE_STATUS 0x00008
#define IXGBE_CTRL_EXT 0x00018
#define IXGBE_EICR 0x00800
#define IXGBE_EICR_RTX(v) (1u << (v)) /* queue vectors 0..15 (IVAR INT_ALLOC) */
#define IXGBE_EICR_LSC (1u << 20)
#define IXGBE_EIMS 0x00880
#define IXGBE_EIMC 0x00888
#define IXGBE_EIAC 0x00810
#define IXGBE_GPIE 0x00898
#define IXGBE_GPIE_MSIX (1u << 4)     /* multiple MSI-X mode */
#define IXGBE_GPIE_OCD (1u << 5)      /* other clear disable: EIAC leaves EICR's other causes */
#define IXGBE_GPIE_EIAME (1u << 30)
#define IXGBE_GPIE_PBA (1u << 31)
#define IXGBE_EIAM 0x00890
#define IXGBE_IVAR_MISC 0x00a00 /* byte 0: TCP timer, byte 1: other causes */
#define IXGBE_EITR0 0x00820
#define IXGBE_IVAR(n) (0x00900u + 4u * (n)) /* queue pair: RX 2n byte 0, TX 2n byte 1, RX 2n+1 byte 2, TX byte 3 */
#define IXGBE_RXQ(n) (0x01000u + 0x40u * (n)) /* RDBAL; RDBAH +4, RDLEN +8, RDH +0x10, RDT +0x18, RXDCTL +0x28 (n < 64) */
#define IXGBE_TXQ(n) (0x06000u + 0x40u * (n)) /* TDBAL; TDBAH +4, TDLEN +8, TDH +0x10, TDT +0x18, TXDCTL +0x28 */
#define IXGBE_SRRCTL(n) (0x02100u + 4u * (n)) /* n < 16 (also at RXQ(n) + 0x14) */
#define IXGBE_SRRCTL_BSIZEPKT(kib) ((uint32_t)(kib) & 0x1f)
#define IXGBE_SRRCTL_DESCTYPE_ADV1 (1u << 25)
#define IXGBE_SRRCTL_DROP_EN (1u << 28)
#define IXGBE_RDRXCTL 0x02f00
#define IXGBE_RDRXCTL_CRCSTRIP (1u << 1)
#define IXGBE_RDRXCTL_DMAIDONE (1u << 3)      /* the RX DMA's init after a reset is done */
#define IXGBE_RXCTRL 0x03000
#define IXGBE_RXCTRL_RXEN 1u
#define IXGBE_HLREG0 0x04240
#define IXGBE_HLREG0_TXCRCEN 1u
#define IXGBE_HLREG0_RXCRCSTRP (1u << 1)
#define IXGBE_HLREG0_TXPADEN (1u << 10)
#define IXGBE_AUTOC 0x042a0 /* 4.6.4, 8.2.3.22.19; its reset value comes from the EEPROM */
#define IXGBE_AUTOC_10G_PMA_PMD_MASK (3u << 7) /* 10G parallel PMA/PMD: 00 XAUI, 01 KX4, 10 CX4 */
#define IXGBE_AUTOC_10G_KX4 (1u << 7)
#define IXGBE_AUTOC_AN_RESTART (1u << 12)      /* self-clearing: restart autonegotiation / link set-up */
#define IXGBE_AUTOC_LMS_SHIFT 13               /* link mode select, bits 15:13 */
#define IXGBE_AUTOC_LMS_MASK (7u << 13)
#define IXGBE_AUTOC_LMS_10G_SERIAL (3u << 13)  /* 10 Gb/s serial (SFI, KR) without autonegotiation */
#define IXGBE_AUTOC_LMS_KX4_KX_KR (4u << 13)   /* backplane: KX4 / KX / KR autonegotiation */
#define IXGBE_AUTOC_KX_SUPP (1u << 30)         /* advertised in backplane autonegotiation */
#define IXGBE_AUTOC_KX4_SUPP (1u << 31)
#define IXGBE_AUTOC2 0x042a8
#define IXGBE_AUTOC2_10G_SERIAL_MASK (3u << 16) /* 10G serial PMA/PMD: 00 KR, 10 SFI */
#define IXGBE_AUTOC2_10G_SFI (2u << 16)
#define IXGBE_LINKS 0x042a4
#define IXGBE_LINKS_UP (1u << 30)
#define IXGBE_LINKS_SPEED_MASK (3u << 28)     /* 11: 10 Gb/s, 10: 1 Gb/s, 01: 100 Mb/s */
#define IXGBE_LINKS_SPEED_10G (3u << 28)
#define IXGBE_LINKS_SPEED_1G (2u << 28)
#define IXGBE_LINKS_SPEED_100M (1u << 28)
#define IXGBE_LINKS_KX_AN_COMP (1u << 31)     /* backplane autonegotiation completed */
#define IXGBE_EEC 0x10010
#define IXGBE_EEC_ARD (1u << 9)               /* the EEPROM's auto-read after a reset is done */
#define IXGBE_DMATXCTL 0x04a80
#define IXGBE_DMATXCTL_TE 1u
#define IXGBE_RXCSUM 0x05000
#define IXGBE_RXCSUM_IPPCSE (1u << 12)
#define IXGBE_RXCSUM_PCSD (1u << 13) /* IP and L4 checksums are always checked on the 82599 */
#define IXGBE_FCTRL 0x05080
#define IXGBE_FCTRL_BAM (1u << 10)
#define IXGBE_MTA 0x05200 /* 128 registers */
#define IXGBE_RAL0 0x0a200
#define IXGBE_RAH0 0x0a204
#define IXGBE_RETA 0x0eb00  /* 32 registers, 4 entries each (queue in bits 3:0 of each byte) */
#define IXGBE_RSSRK 0x0eb80 /* 10 registers */
#define IXGBE_MRQC 0x0ec80
#define IXGBE_MRQC_RSS 1u   /* bits 3:0 = 0001: RSS only */
#define IXGBE_EERD 0x10014
#define IXGBE_EERD_START 1u
#define IXGBE_EERD_DONE (1u << 1)
#define IXGBE_EERD_ADDR_SHIFT 2
#define IXGBE_NQUEUES 64
/* statistics */
#define IXGBE_CRCERRS 0x04000
#define IXGBE_ILLERRC 0x04004
#define IXGBE_MPC0 0x03fa0
#define IXGBE_GPRC 0x04074
#define IXGBE_GPTC 0x04080
#define IXGBE_GORCL 0x04088
#define IXGBE_GOTCL 0x04090
#define IXGBE_RNBC0 0x03fc0

/* ---- shared by both: queue register block offsets, RSS hash fields, descriptors ---- */
#define IX_Q_BAL 0x00
#define IX_Q_BAH 0x04
#define IX_Q_LEN 0x08
#define IX_Q_HEAD 0x10
#define IX_Q_TAIL 0x18
#define IX_Q_DCTL 0x28
#define IX_DCTL_ENABLE (1u << 25) /* RXDCTL / TXDCTL queue enable */
#define IX_MRQC_TCPIPV4 (1u << 16)
#define IX_MRQC_IPV4 (1u << 17)
#define IX_RETA_REGS 32
#define IX_RETA_ENTRIES 128
#define IX_RSSRK_BYTES 40
#define IX_IVAR_VALID 0x80u

/* Advanced receive descriptor, "one buffer": read format (what the driver writes) and
 * write-back format (what the device writes over it). */
union ix_rx_desc {
	struct {
		uint64_t pkt_addr;
		uint64_t hdr_addr; /* bit 0 is DD in write-back: 0 */
	} read;
	struct {
		uint32_t info;     /* RSS type 3:0, packet type 16:4, HDR_LEN 30:21, SPH 31 */
		uint32_t rss;      /* RSS hash (RXCSUM.PCSD) or IP id / fragment checksum */
		uint32_t staterr;  /* extended status 19:0, extended errors 31:20 */
		uint16_t length;   /* PKT_LEN */
		uint16_t vlan;
	} wb;
};
_Static_assert(sizeof(union ix_rx_desc) == 16, "16-byte descriptors");
#define IX_RXS_DD (1u << 0)
#define IX_RXS_EOP (1u << 1)
#define IX_RXS_VP (1u << 3)
#define IX_RXS_UDPCS (1u << 4)
#define IX_RXS_L4CS (1u << 5)
#define IX_RXS_IPCS (1u << 6)
#define IX_RXS_PIF (1u << 7)
#define IX_RX_RSSTYPE(info) ((info) & 0xfu)
#define IX_RX_PKTTYPE(info) (((info) >> 4) & 0x1fffu)
#define IX_PKT_IPV4 (1u << 0)
#define IX_PKT_IPV4E (1u << 1)
#define IX_PKT_IPV6 (1u << 2)
#define IX_PKT_TCP (1u << 4)
#define IX_PKT_UDP (1u << 5)
#define IX_RSSTYPE_TCPV4 1u
#define IX_RSSTYPE_IPV4 2u
/* Extended errors differ: 82576 RXE 31, IPE 30, TCPE 29; 82599 IPE 31, TCPE 30, RXE 29. */
#define IGB_RXE_RXE (1u << 31)
#define IGB_RXE_IPE (1u << 30)
#define IGB_RXE_TCPE (1u << 29)
#define IXGBE_RXE_IPE (1u << 31)
#define IXGBE_RXE_TCPE (1u << 30)
#define IXGBE_RXE_RXE (1u << 29)

/* Advanced transmit descriptors: data (read format) and context; write-back sets DD in
 * olinfo_status (STA bit 0). */
union ix_tx_desc {
	struct {
		uint64_t addr;
		uint32_t cmd_type_len; /* DTALEN 15:0, DTYP 23:20, DCMD 31:24 */
		uint32_t olinfo;       /* STA 3:0, IDX 6:4, CC 7 (82599), POPTS 13:8, PAYLEN 31:14 */
	} data;
	struct {
		uint32_t vlan_macip_lens; /* IPLEN 8:0, MACLEN 15:9, VLAN 31:16 */
		uint32_t seqnum_seed;
		uint32_t type_tucmd_mlhl; /* TUCMD 19:9, DTYP 23:20, DEXT 29 */
		uint32_t mss_l4len_idx;   /* IDX 6:4, L4LEN 15:8, MSS 31:16 */
	} ctx;
};
_Static_assert(sizeof(union ix_tx_desc) == 16, "16-byte descriptors");
#define IX_TXD_DTYP_CTXT (2u << 20)
#define IX_TXD_DTYP_DATA (3u << 20)
#define IX_TXD_EOP (1u << 24)
#define IX_TXD_IFCS (1u << 25)
#define IX_TXD_RS (1u << 27)
#define IX_TXD_DEXT (1u << 29)
#define IX_TXD_STA_DD 1u
#define IX_TXD_POPTS_IXSM (1u << 8)
#define IX_TXD_POPTS_TXSM (1u << 9)
#define IX_TXD_PAYLEN_SHIFT 14
#define IXGBE_TXD_CC (1u << 7)
#define IX_TXCTX_MACLEN_SHIFT 9
#define IX_TXCTX_TUCMD_IPV4 (1u << 10)
#define IX_TXCTX_TUCMD_L4T_UDP (0u << 11)
#define IX_TXCTX_TUCMD_L4T_TCP (1u << 11)
