/* DebugLog over an STM32F4 USART: transmit only, polled, started on first use.  Which
 * USART, pin and baud-rate divisor come from tflm_board.h, generated for the chosen board
 * (--board); the divisor assumes the clock after reset (HSI, 16 MHz, no prescaler), since
 * the board startup leaves the clock tree alone.  A '\n' goes out as "\r\n" for terminals. */
#include <stdint.h>

#include "tflm_board.h"
#include "tflm_debug_log.h"

#define TFLM_REG(address) (*(volatile uint32_t *)(address))

#define TFLM_RCC_BASE 0x40023800u
#define TFLM_RCC_AHB1ENR (TFLM_RCC_BASE + 0x30u) /* GPIO port clocks */
#define TFLM_GPIO_MODER(port) ((port) + 0x00u)
#define TFLM_GPIO_AFR(port, pin) ((port) + 0x20u + 4u * ((pin) / 8u))
#define TFLM_USART_SR (TFLM_BOARD_USART_BASE + 0x00u)
#define TFLM_USART_DR (TFLM_BOARD_USART_BASE + 0x04u)
#define TFLM_USART_BRR (TFLM_BOARD_USART_BASE + 0x08u)
#define TFLM_USART_CR1 (TFLM_BOARD_USART_BASE + 0x0Cu)
#define TFLM_USART_SR_TXE (1u << 7)    /* transmit data register empty */
#define TFLM_USART_CR1_UE (1u << 13)   /* USART enable */
#define TFLM_USART_CR1_TE (1u << 3)    /* transmitter enable */

static int tflm_console_started;

/* Clocks the GPIO port and the USART, gives the TX pin to the USART, 8N1 at the baud rate. */
static void tflm_console_start(void) {
  const uint32_t pin = TFLM_BOARD_TX_PIN, port = TFLM_BOARD_TX_PORT_BASE;
  const uint32_t shift = 4u * (pin % 8u);
  TFLM_REG(TFLM_RCC_AHB1ENR) |= 1u << TFLM_BOARD_TX_PORT_INDEX;
  TFLM_REG(TFLM_RCC_BASE + TFLM_BOARD_USART_RCC_OFFSET) |= 1u << TFLM_BOARD_USART_RCC_BIT;
  TFLM_REG(TFLM_GPIO_AFR(port, pin)) =
      (TFLM_REG(TFLM_GPIO_AFR(port, pin)) & ~(15u << shift)) | (TFLM_BOARD_TX_AF << shift);
  TFLM_REG(TFLM_GPIO_MODER(port)) =
      (TFLM_REG(TFLM_GPIO_MODER(port)) & ~(3u << (2u * pin))) | (2u << (2u * pin));
  TFLM_REG(TFLM_USART_BRR) = TFLM_BOARD_USART_BRR;
  TFLM_REG(TFLM_USART_CR1) = TFLM_USART_CR1_UE | TFLM_USART_CR1_TE;
  tflm_console_started = 1;
}

static void tflm_console_put(char c) {
  while ((TFLM_REG(TFLM_USART_SR) & TFLM_USART_SR_TXE) == 0u) {
  }
  TFLM_REG(TFLM_USART_DR) = (uint32_t)(unsigned char)c;
}

void tflm_debug_log(const char *text) {
  if (!tflm_console_started) tflm_console_start();
  for (; *text != '\0'; ++text) {
    if (*text == '\n') tflm_console_put('\r');
    tflm_console_put(*text);
  }
}
