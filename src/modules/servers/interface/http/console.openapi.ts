import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** The answer of POST /v1/servers/{id}/console (servers.md "console"). */
@ApiSchema({ name: 'ServerConsole', description: 'A one-time VNC console credential: shown in this answer only, valid for 60 seconds' })
export class ServerConsoleResponse {
  @ApiProperty({ enum: ['vnc'], example: 'vnc' })
  type: 'vnc';

  @ApiProperty({
    description: 'A wss:// URL carrying a one-time token; connect with a VNC client over WebSocket before expires_at',
    example: 'wss://console.compute.invalid/v1/vnc/ins_0123456789abcdefABCD?token=q0vZ3Jb8cXy1Wm2Nk4Lp5Rs6Tu7Vw9Ax',
  })
  url: string;

  @ApiProperty({ description: 'The VNC password: 24 letters and digits', example: 'S3kr1tVncPassw0rdAbCdEfG', pattern: '^[A-Za-z0-9]{24}$' })
  password: string;

  @ApiProperty({ type: String, format: 'date-time', description: 'Now + 60 seconds; the credential does not work after it', example: '2026-11-27T10:01:00.000Z' })
  expires_at: string;
}
